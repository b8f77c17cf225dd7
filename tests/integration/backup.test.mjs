// backup.test.mjs - scripts/backup on the `make run` shape (SQLite stores;
// docs/backups.md): a backup taken while the writer is storing another
// batch restores into a new directory whose stores pass SQLite's integrity
// check, and an api started on the restored files answers the same events
// and persons as the original, with the same personal API key.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD, startServer } from './lib/proc.mjs';
import { pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pair = { queue: 'redis', store: 'sqlite', persons: 'sqlite' };

describe(`scripts/backup: ${pairName(pair)}`, () => {
  let s, restoredApi;
  const capture = async (batch) => {
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch }) });
    assert.equal(r.status, 200, await r.text());
  };
  const events = (n, name) => Array.from({ length: n }, (_, i) => ({ event: name, distinct_id: `user-${i % 5}`, uuid: crypto.randomUUID(), timestamp: new Date(Date.now() - i * 1000).toISOString(), properties: { i, $set: { n: i } } }));

  before(async () => { s = await startPair(pair); });
  after(async () => { await restoredApi?.stop(); await s?.stop(); });

  test('a backup taken while writing restores to stores that answer the same', async () => {
    const env = (dir) => ({ ...process.env, VAR_DIR: dir, DATABASE_URL: `sqlite:${dir}/meta.db`, EVENTS_DB: `${dir}/events.db`, PERSONS_DATABASE_URL: `sqlite:${dir}/persons.db`, CLICKHOUSE_URL: '' });
    await capture(events(40, 'before'));
    await within(20000, 'the first batch stored', async () => Number(await s.store.count("event = 'before'")) === 40);
    const list = async (port) => {
      const get = async (p) => (await (await fetch(`http://127.0.0.1:${port}${p}`, { headers: { Authorization: `Bearer ${s.boot.personal_api_key}` } })).json());
      const ev = await get(`/api/projects/${s.boot.project_id}/events/?event=before&limit=100`);
      const persons = await get(`/api/projects/${s.boot.project_id}/persons/?limit=100`);
      return { events: ev.results?.map((e) => [e.id, e.distinct_id, e.timestamp, e.properties.i]), persons: persons.results?.map((p) => [p.id, p.distinct_ids, p.properties.n]) };
    };
    const original = await list(s.api.port);
    assert.equal(original.events.length, 40);
    assert.equal(original.persons.length, 5);

    const dest = path.join(s.tmp, 'backup');
    const writing = capture(events(200, 'during')); // the writer stores these meanwhile
    const { stdout } = await run(path.join(ROOT, 'scripts/backup'), [dest], { env: env(s.tmp) });
    await writing;
    assert.match(stdout, /events\.db: .* -> /);
    for (const f of ['meta.db', 'events.db', 'persons.db']) assert.ok(fs.existsSync(path.join(dest, f)), f);

    const restored = path.join(s.tmp, 'restored');
    await run(path.join(ROOT, 'scripts/backup'), ['--restore', dest], { env: env(restored) });
    for (const f of ['meta.db', 'events.db', 'persons.db']) {
      const { stdout: ok } = await run('sqlite3', [path.join(restored, f), 'PRAGMA integrity_check']);
      assert.equal(ok.trim(), 'ok', f);
    }
    restoredApi = await startServer(path.join(BUILD, 'bin', 'api'), { API_PORT: '0', REDIS_URL: s.redis.url, LOG_LEVEL: 'warn', DATABASE_URL: `sqlite:${restored}/meta.db`, EVENTS_DB: `${restored}/events.db` }, { ready: true });
    assert.deepEqual(await list(restoredApi.port), original);
    // the writer's persons store came along: the five persons of the first batch
    const { stdout: persons } = await run('sqlite3', [path.join(restored, 'persons.db'), 'SELECT count(*) FROM persons']);
    assert.equal(Number(persons), 5);
  });

  test('usage errors', async () => {
    await assert.rejects(run(path.join(ROOT, 'scripts/backup'), []), (e) => e.code === 2);
    await assert.rejects(run(path.join(ROOT, 'scripts/backup'), ['--restore', path.join(s.tmp, 'nothing-here')]), (e) => e.code === 1);
  });
});
