// writer_tenancy.test.mjs - event uuids are unique per project, not across
// projects, on both pairs of backends (lib/suite.mjs): project B capturing
// uuid U first must not make project A's event with U vanish, nor its $set
// (the event store's deduplication and the writer's events_seen both key
// on the project and the uuid). A SQLite event store made before this
// (unique index on uuid alone) is migrated when it is opened.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { redisCommand, startRedis } from './lib/redis.mjs';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { sleep, within } from './lib/rawhttp.mjs';

const run = promisify(execFile);

for (const pair of PAIRS) describe(`uuids per project: ${pairName(pair)}`, () => {
  let s, A, B;
  const uuidIs = (u) => (pair.store === 'sqlite' ? `uuid = '${u}'` : `toString(uuid) = '${u}'`);
  // The sqlite3 shell answers "database is locked" when it reads while the
  // writer commits: -1, asked again by within().
  const count = (where) => s.store.count(where).catch((e) => { if (/locked/.test(e.message)) return -1; throw e; });
  const countNow = async (where) => {
    for (;;) {
      const n = await count(where);
      if (n >= 0) return n;
      await sleep(20);
    }
  };
  const capture = async (token, body) => {
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch: [body] }) });
    assert.equal(r.status, 200, await r.text());
  };

  before(async () => {
    s = await startPair(pair);
    A = { id: s.boot.project_id, token: s.boot.project_api_token };
    const made = await s.call('POST', '/api/projects/', { name: 'B', organization: s.boot.organization_id });
    assert.equal(made.status, 201);
    B = { id: made.json.id, token: made.json.api_token };
    await within(15000, 'project B published', async () => (await redisCommand(s.redis.port, 'HGET', 'projects:tokens', B.token)) === String(B.id));
  });

  after(async () => { await s?.stop(); });

  test('project B\'s uuid U first, then project A\'s: both stored, A\'s $set applied', async () => {
    const U = crypto.randomUUID();
    const at = new Date().toISOString();
    await capture(B.token, { event: 'b-event', distinct_id: 'b-user', uuid: U, timestamp: at, properties: { $set: { plan: 'b-plan' } } });
    await within(15000, 'B\'s event stored', async () => (await count(`project_id = ${B.id} AND ${uuidIs(U)}`)) === 1);
    await within(15000, 'B\'s person written', async () => (await s.get(`/api/projects/${B.id}/persons/?distinct_id=b-user`)).json.results?.length === 1);
    await capture(A.token, { event: 'a-event', distinct_id: 'a-user', uuid: U, timestamp: at, properties: { $set: { plan: 'pro' } } });
    await within(15000, 'A\'s event stored', async () => (await count(`project_id = ${A.id} AND ${uuidIs(U)}`)) === 1);
    assert.equal(await countNow(uuidIs(U)), 2, 'one event in each project');
    await within(15000, 'A\'s person has the property', async () => {
      const found = (await s.get(`/api/projects/${A.id}/persons/?distinct_id=a-user`)).json.results;
      return found?.length === 1 && found[0].properties.plan === 'pro';
    });
    const b = (await s.get(`/api/projects/${B.id}/persons/?distinct_id=b-user`)).json.results;
    assert.equal(b[0].properties.plan, 'b-plan', 'B\'s person is untouched');
  });

  test('a redelivered copy within one project is still dropped', async () => {
    const U = crypto.randomUUID();
    const body = { event: 'twice', distinct_id: 'a-user', uuid: U, timestamp: new Date().toISOString(), properties: {} };
    await capture(A.token, body);
    await capture(A.token, body);
    const marker = crypto.randomUUID(); // written after both copies
    await capture(A.token, { ...body, uuid: marker, event: 'marker' });
    await within(15000, 'the marker stored', async () => (await count(uuidIs(marker))) === 1);
    if (pair.store === 'clickhouse') await s.store.ch.rows('OPTIMIZE TABLE events FINAL');
    assert.equal(await countNow(uuidIs(U)), 1);
  });
});

// The layout of sqlite.sql before uuids were per project: version 1 with
// the unique index on uuid alone.
const OLD_LAYOUT = `
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY);
INSERT INTO schema_migrations VALUES (1);
CREATE TABLE events (uuid TEXT NOT NULL, project_id INTEGER NOT NULL, event TEXT NOT NULL,
  distinct_id TEXT NOT NULL, person_id TEXT NOT NULL, properties TEXT NOT NULL,
  person_properties TEXT NOT NULL, timestamp TEXT NOT NULL, timestamp_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL, session_id TEXT NOT NULL);
CREATE UNIQUE INDEX events_uuid ON events (uuid);
CREATE INDEX events_project_time ON events (project_id, timestamp_ms);
INSERT INTO events VALUES ('0190aaaa-0000-7000-8000-000000000001', 1, 'old', 'd', '', '{}', '{}',
  '2026-01-01 00:00:00', 1767225600000, '2026-01-01 00:00:00', '');
`;

test('an event store made with the old layout is migrated to per-project uuids', async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-evmig-'));
  const db = path.join(tmp, 'events.db');
  await run('sqlite3', [db, OLD_LAYOUT]);
  const redis = await startRedis();
  const env = { API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, EVENTS_DB: db, LOG_LEVEL: 'warn' };
  const api = await startServer(path.join(BUILD, 'bin/api'), env, { ready: true });
  t.after(async () => { await api.stop(); await redis.stop(); fs.rmSync(tmp, { recursive: true, force: true }); });
  const q = async (sql) => (await run('sqlite3', [db, '.timeout 5000', sql])).stdout.trim();
  await within(15000, 'migration 2 applied', async () => (await q('SELECT MAX(version) FROM schema_migrations')) === '2');
  const indexes = (await q("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")).split('\n');
  assert.ok(!indexes.includes('events_uuid'), `old index gone: ${indexes}`);
  assert.ok(indexes.includes('events_project_uuid'), `new index: ${indexes}`);
  assert.equal(await q('SELECT COUNT(*) FROM events'), '1', 'the stored event is kept');
  // The same uuid in another project goes in; in the same project it does not.
  const ins = (p) => `INSERT OR IGNORE INTO events VALUES ('0190aaaa-0000-7000-8000-000000000001', ${p}, 'x', 'd', '', '{}', '{}', '2026-01-01 00:00:00', 0, '2026-01-01 00:00:00', '');`;
  await q(ins(2) + ins(1));
  assert.equal(await q('SELECT group_concat(project_id) FROM (SELECT project_id FROM events ORDER BY project_id)'), '1,2');
});
