// clickhouse_harness.test.mjs - the ClickHouse test harness (lib/clickhouse.mjs)
// against the real server: start, the event-store table as it runs on
// Debian's ClickHouse 18.16, JSONEachRow in and out over HTTP, and a stop
// that leaves no process and no temp dir behind.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startClickHouse } from './lib/clickhouse.mjs';

// 18.16 cannot hash a UUID (cityHash64(uuid) is accepted by CREATE but every
// INSERT fails), so the sort key hashes its text form; newer servers accept
// both spellings.
const EVENTS_DDL = `CREATE TABLE IF NOT EXISTS events
(
    uuid UUID,
    project_id Int64,
    event String,
    distinct_id String,
    person_id UUID,
    properties String,
    person_properties String,
    timestamp DateTime('UTC'),
    timestamp_ms Int64,
    created_at DateTime('UTC'),
    session_id String
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(toString(uuid)))`;

const INSERT_SETTINGS = { date_time_input_format: 'best_effort', input_format_skip_unknown_fields: 1 };
const U1 = '0190a8f0-0000-7000-8000-000000000001';
const U2 = '0190a8f0-0000-7000-8000-000000000002';
const PERSON = '0190a8f0-0000-7000-8000-0000000000aa';

// Quotes, backslashes, non-ASCII (incl. outside the BMP), a real NUL and
// control characters, and the escaped text of a NUL inside the raw JSON.
const ODD = 'say "hi" C:\\dir\\x héllo ☃ 😀 日本 a\u0000b \t\n\u0001 a/b';
const PROPS = JSON.stringify({ $current_url: 'https://example.test/?q="x"', plan: 'pro', odd: ODD });
// Raw bytes in a String column: a real NUL, a quote, a backslash.
const SESSION = 's1\u0000"\\☃';

let ch;
before(async () => { ch = await startClickHouse(); });
after(async () => { if (ch) await ch.stop(); });

test('starts on loopback ports of its own and answers /ping', async (t) => {
  t.diagnostic(`clickhouse ready in ${Math.round(ch.startupMs)} ms on ${ch.url} (tcp ${ch.tcpPort})`);
  assert.match(ch.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(ch.httpPort, ch.tcpPort);
  assert.equal(await (await fetch(`${ch.url}/ping`)).text(), 'Ok.\n');
  assert.match((await ch.query('SELECT version()')).trim(), /^\d+\.\d+/);
});

test('events: JSONEachRow in with best_effort dates, read back intact', async () => {
  await ch.query(EVENTS_DDL);
  await ch.query(EVENTS_DDL); // IF NOT EXISTS: a second run is a no-op
  await ch.query('INSERT INTO events FORMAT JSONEachRow', {
    settings: INSERT_SETTINGS,
    body: [
      {
        uuid: U1, project_id: 1, event: '$pageview', distinct_id: 'd1', person_id: PERSON,
        properties: PROPS, person_properties: '{"email":"a@b.test"}',
        timestamp: '2026-11-25T10:00:00.123Z', timestamp_ms: 1795600800123,
        created_at: '2026-11-25T10:00:01Z', session_id: SESSION,
        not_a_column: { skipped: true },
      },
      {
        uuid: U2, project_id: 1, event: 'signup', distinct_id: 'd2', person_id: PERSON,
        properties: '{}', person_properties: '{}',
        timestamp: '2026-11-25 10:00:00', timestamp_ms: 1795600800000,
        created_at: '2026-11-25 10:00:01', session_id: '',
      },
    ],
  });

  const rows = await ch.rows(`SELECT uuid, project_id, event, distinct_id, person_id, properties,
    person_properties, timestamp, toUnixTimestamp(timestamp) AS ts, timestamp_ms, created_at, session_id
    FROM events WHERE uuid IN ('${U1}', '${U2}') ORDER BY uuid`);
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0], {
    uuid: U1, project_id: '1', event: '$pageview', distinct_id: 'd1', person_id: PERSON,
    properties: PROPS, person_properties: '{"email":"a@b.test"}',
    timestamp: '2026-11-25 10:00:00', ts: 1795600800, timestamp_ms: '1795600800123',
    created_at: '2026-11-25 10:00:01', session_id: SESSION,
  });
  assert.equal(rows[1].timestamp, '2026-11-25 10:00:00');
  assert.equal(rows[1].ts, 1795600800);
  assert.equal(JSON.parse(rows[0].properties).odd, ODD);

  // A value out of the raw JSON with the functions 18.16 has.
  const [got] = await ch.rows(`SELECT visitParamExtractString(properties, 'plan') AS plan,
    visitParamExtractString(properties, 'odd') AS odd FROM events WHERE uuid = '${U1}'`);
  assert.deepEqual(got, { plan: 'pro', odd: ODD });

  const json = JSON.parse(await ch.query(`SELECT uuid, properties FROM events WHERE uuid = '${U1}' FORMAT JSON`));
  assert.deepEqual(json.meta, [{ name: 'uuid', type: 'UUID' }, { name: 'properties', type: 'String' }]);
  assert.equal(json.data[0].properties, PROPS);
});

test('events: a re-sent event collapses under FINAL and on OPTIMIZE', async () => {
  // No background merge may collapse it before the raw count below.
  await ch.query('SYSTEM STOP MERGES events');
  await ch.query('INSERT INTO events FORMAT JSONEachRow', {
    settings: INSERT_SETTINGS,
    body: [{
      uuid: U2, project_id: 1, event: 'signup', distinct_id: 'd2', person_id: PERSON,
      properties: '{"resent":true}', person_properties: '{}',
      timestamp: '2026-11-25T10:00:00.500Z', timestamp_ms: 1795600800500,
      created_at: '2026-11-25 10:00:02', session_id: '',
    }],
  });
  assert.equal((await ch.query('SELECT count() FROM events')).trim(), '3');
  assert.equal((await ch.query('SELECT count() FROM events FINAL')).trim(), '2');
  await ch.query('SYSTEM START MERGES events');
  await ch.query('OPTIMIZE TABLE events FINAL');
  assert.equal((await ch.query('SELECT count() FROM events')).trim(), '2');
  const [row] = await ch.rows(`SELECT properties FROM events WHERE uuid = '${U2}'`);
  assert.equal(row.properties, '{"resent":true}'); // without a version column the last insert wins
});

test('errors come back as HTTP errors with the ClickHouse code', async () => {
  await assert.rejects(ch.query('SELECT * FROM no_such_table'), (e) => e.status === 404 && e.code === 60);
  await assert.rejects(ch.query('SELEC 1'), (e) => e.status === 400 && e.code === 62);
});

test('stop kills the server by PID and removes its temp dir', async () => {
  const { pid, dir } = ch;
  assert.doesNotThrow(() => process.kill(pid, 0));
  await ch.stop();
  ch = null;
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  assert.equal(fs.existsSync(dir), false);
});
