// evstore.mjs - the event store a writer test runs against: SQLite (a file
// in the test's temp dir, read with the sqlite3 CLI) or ClickHouse (started
// by lib/clickhouse.mjs); env is what the writer and the api need to reach
// it; outage(ms) makes it unusable for ms.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { startClickHouse } from './clickhouse.mjs';

const run = promisify(execFile);

export async function openStore(kind, tmp) {
  if (kind === 'sqlite') {
    const db = path.join(tmp, 'events.db');
    const rows = async (q) => {
      const { stdout } = await run('sqlite3', ['-json', db, q], { maxBuffer: 1 << 28 });
      return stdout.trim() ? JSON.parse(stdout) : [];
    };
    return {
      env: { EVENTS_DB: db },
      count: async (where = '1') => (await rows(`SELECT COUNT(*) AS n FROM events WHERE ${where}`))[0].n,
      distinct: async () => (await rows('SELECT COUNT(DISTINCT uuid) AS n FROM events'))[0].n,
      uuids: async () => (await rows('SELECT uuid AS u FROM events')).map((r) => r.u),
      // [{i, t}]: the integer property `key` and timestamp_ms of distinct id d's events
      propTimes: (d, key) => rows(`SELECT json_extract(properties, '$.${key}') AS i, timestamp_ms AS t FROM events WHERE distinct_id = '${d}'`),
      // Another process holds SQLite's write lock: every write waits out
      // its busy timeout and fails. The shell waits its turn for the lock
      // (.timeout) when the writer is in the middle of a write.
      outage: (ms) => new Promise((resolve, reject) => {
        const p = spawn('sqlite3', [db, '.timeout 10000', 'BEGIN EXCLUSIVE;', `.shell sleep ${ms / 1000}`, 'COMMIT;'], { stdio: 'ignore' });
        p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`sqlite3 lock exited ${code}`))));
      }),
      stop: async () => {},
    };
  }
  const ch = await startClickHouse();
  const n = async (q) => Number((await ch.rows(q))[0].n);
  return {
    env: { CLICKHOUSE_URL: ch.url },
    count: (where = '1') => n(`SELECT count() AS n FROM events WHERE ${where}`),
    distinct: () => n('SELECT uniqExact(uuid) AS n FROM events'),
    uuids: async () => (await ch.rows('SELECT toString(uuid) AS u FROM events')).map((r) => r.u),
    propTimes: async (d, key) => (await ch.rows(`SELECT visitParamExtractInt(properties, '${key}') AS i, timestamp_ms AS t FROM events WHERE distinct_id = '${d}'`))
      .map((r) => ({ i: Number(r.i), t: Number(r.t) })),
    outage: (ms) => ch.down(ms),
    stop: () => ch.stop(),
    ch,
  };
}
