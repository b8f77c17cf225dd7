// clickhouse_migrations.test.mjs - the ClickHouse event store's versioned
// migrations (proto/event_store/clickhouse.sql, evstore_ch_migrations.c) on
// a real ClickHouse 18.16: a database from before migrations (today's
// tables, no schema_migrations) upgrades in place with its events kept; two
// apis starting at once on a new database both come up on one schema; a
// restart on a current schema runs nothing and adds no version row.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, ROOT, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { startClickHouse } from './lib/clickhouse.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin', 'api');
const DDL = fs.readFileSync(path.join(ROOT, 'proto', 'event_store', 'clickhouse.sql'), 'utf8');

// The file's migrations as the test reads them: version -> statements.
function migrations() {
  const out = new Map();
  let cur = 0;
  let text = '';
  const flush = () => {
    if (cur) out.set(cur, text.split(';').map((s) => s.trim()).filter(Boolean));
  };
  for (const line of DDL.split('\n')) {
    const m = line.match(/^\s*-- migration (\d+)/);
    if (m) {
      flush();
      cur = Number(m[1]);
      text = '';
    } else if (!/^\s*--/.test(line)) text += line + '\n';
  }
  flush();
  return out;
}

describe('ClickHouse event store: versioned migrations', () => {
  let ch, redis, tmp, boot;
  const apis = [];
  const all = migrations();
  const latest = Math.max(...all.keys());

  const envFor = (db) => ({
    API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, LOG_LEVEL: 'warn',
    CLICKHOUSE_URL: `${ch.url}/?database=${db}`, MATERIALIZE_CHECK: '1h',
  });
  // A HogQL run through the api: it waits until the store's setup is done.
  const count = async (api, name) => {
    const h = { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' };
    const E = `http://127.0.0.1:${api.port}/api/projects/${boot.project_id}/endpoints/`;
    let r = await fetch(E, { method: 'POST', headers: h, body: JSON.stringify({ name, query: { kind: 'HogQLQuery', query: 'SELECT count() AS n FROM events' } }) });
    assert.equal(r.status, 201, await r.text());
    r = await fetch(`${E}${name}/run`, { method: 'POST', headers: h, body: '{}' });
    const j = await r.json();
    assert.equal(r.status, 200, JSON.stringify(j));
    return Number(j.results[0][0]);
  };
  const versionRows = async (db) => ch.rows(`SELECT version FROM ${db}.schema_migrations ORDER BY version`);
  const tables = async (db) => (await ch.rows(`SELECT name FROM system.tables WHERE database = '${db}' ORDER BY name`)).map((r) => r.name);

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ch-migrate-'));
    [ch, redis] = await Promise.all([startClickHouse(), startRedis()]);
    const env = envFor('default');
    boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...env } })).stdout);
  });

  after(async () => {
    for (const a of apis) await a.stop();
    await redis?.stop();
    await ch?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the file holds migration 1 and versions rise from it', () => {
    const versions = [...all.keys()];
    assert.equal(versions[0], 1);
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
    for (const stmts of all.values()) assert.ok(stmts.length > 0);
  });

  test('a database from before migrations upgrades in place, its events kept', async () => {
    await ch.query('CREATE DATABASE old_schema');
    // today's schema as it was created before migrations: migration 1's statements
    for (const s of all.get(1)) await ch.query(s, { settings: { database: 'old_schema' } });
    const rows = [1, 2, 3].map((i) => ({
      uuid: `0000000${i}-0000-4000-8000-000000000000`, project_id: boot.project_id, event: 'kept', distinct_id: `d${i}`,
      person_id: '00000000-0000-4000-8000-000000000009', properties: '{}', person_properties: '{}',
      timestamp: '2026-01-02 03:04:05', timestamp_ms: 1767323045000, created_at: '2026-01-02 03:04:05', session_id: '',
    }));
    await ch.query('INSERT INTO old_schema.events FORMAT JSONEachRow', { body: rows });
    assert.ok(!(await tables('old_schema')).includes('schema_migrations'));

    const api = await startServer(API, envFor('old_schema'), { ready: true });
    apis.push(api);
    assert.equal(await count(api, 'old-count'), rows.length);
    assert.deepEqual((await versionRows('old_schema')).map((r) => r.version), [...all.keys()]);
  });

  test('two apis starting at once on a new database agree on one schema', async () => {
    await ch.query('CREATE DATABASE fresh');
    const two = await Promise.all([0, 1].map(() => startServer(API, envFor('fresh'), { ready: true })));
    apis.push(...two);
    const counts = await Promise.all(two.map((a, i) => count(a, `fresh-${i}`)));
    assert.deepEqual(counts, [0, 0]);
    const have = await tables('fresh');
    for (const t of ['events', 'persons', 'person_distinct_ids', 'groups', 'schema_migrations']) assert.ok(have.includes(t), `${t} in ${have}`);
    // a racing starter may record a version twice; each is there, none missing
    const versions = (await versionRows('fresh')).map((r) => r.version);
    assert.deepEqual([...new Set(versions)], [...all.keys()]);
    assert.ok(versions.length <= 2 * all.size);
    const [{ v }] = await ch.rows('SELECT max(version) AS v FROM fresh.schema_migrations');
    assert.equal(v, latest);
  });

  test('a schema newer than the binary knows is refused: a read fails at once; the log and the writer\'s /_ready say why', async () => {
    await ch.query('CREATE DATABASE newer');
    const a = await startServer(API, envFor('newer'), { ready: true });
    apis.push(a);
    assert.equal(await count(a, 'newer-0'), 0);
    await ch.query(`INSERT INTO newer.schema_migrations (version) VALUES (${latest + 1})`);
    const rowsBefore = (await versionRows('newer')).length;
    const b = await startServer(API, envFor('newer'), { ready: true });
    apis.push(b);
    const reason = `schema version ${latest + 1} is newer than this binary's latest migration ${latest}`;
    const h = { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' };
    const E = `http://127.0.0.1:${b.port}/api/projects/${boot.project_id}/endpoints/`;
    let r = await fetch(E, { method: 'POST', headers: h, body: JSON.stringify({ name: 'newer-1', query: { kind: 'HogQLQuery', query: 'SELECT count() AS n FROM events' } }) });
    assert.equal(r.status, 201, await r.text());
    r = await fetch(`${E}newer-1/run`, { method: 'POST', headers: h, body: '{}' });
    const body = await r.text();
    // at once, not after the store's wait for tables: the client gets the
    // api's 503 (its detail never quotes the store); the log names the reason
    assert.equal(r.status, 503, body);
    assert.equal(JSON.parse(body).code, 'unavailable');
    assert.ok(b.stderr().includes(reason), b.stderr());
    assert.equal((await versionRows('newer')).length, rowsBefore, 'nothing migrated');
    // a writer on it: its /_ready gives the reason (the api's does not
    // depend on the event store)
    const w = await startServer(path.join(BUILD, 'bin', 'writer'), {
      WRITER_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn', PERSONS_DATABASE_URL: `sqlite:${tmp}/persons.db`,
      CLICKHOUSE_URL: `${ch.url}/?database=newer`,
    });
    apis.push(w);
    let ready = { status: 0, text: '' };
    for (let i = 0; i < 100 && !ready.text.includes(reason); i++) {
      const res = await fetch(`http://127.0.0.1:${w.port}/_ready`);
      ready = { status: res.status, text: await res.text() };
      if (!ready.text.includes(reason)) await new Promise((res2) => setTimeout(res2, 100));
    }
    assert.equal(ready.status, 503, ready.text);
    assert.ok(ready.text.includes(reason), ready.text);
  });

  test('a second ADD COLUMN of one column fails with code 44, the mark\'s code', async () => {
    await ch.query('CREATE TABLE default.add_twice (a UInt8) ENGINE = MergeTree ORDER BY a');
    await ch.query('ALTER TABLE default.add_twice ADD COLUMN b UInt8');
    await assert.rejects(ch.query('ALTER TABLE default.add_twice ADD COLUMN b UInt8'), /Code: 44,/);
  });

  test('a restart on a current schema runs no migration', async () => {
    const before = (await versionRows('fresh')).length;
    const a = await startServer(API, envFor('fresh'), { ready: true });
    apis.push(a);
    assert.equal(await count(a, 'fresh-again'), 0);
    assert.equal((await versionRows('fresh')).length, before);
  });
});
