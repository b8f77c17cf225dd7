// clickhouse_versions.test.mjs - the api prints HogQL for the version the
// ClickHouse it reaches reports (docs/endpoints.md "ClickHouse versions"):
// the server here is Debian's 18.16, so a run's SQL (debug: true) is
// 18.16's where the versions differ (the minute as %M, an arrayJoin alias
// printed as its expression, where 24 prints %i and the column's name),
// and the server answers it. The SQL of 21.8+ and 24 is pinned by the
// printer's golden files (tests/unit/api/query/), since no newer server
// runs here.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const pair = PAIRS.find((p) => p.store === 'clickhouse');
const TIMES = ['2024-03-01T09:05:00Z', '2024-03-01T13:47:00Z', '2024-03-02T23:59:00Z'];

describe('ClickHouse versions: the api prints for the server it finds', { skip: !pair }, () => {
  let s, E;

  before(async () => {
    s = await startPair(pair, {});
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    TIMES.forEach((t, i) => client.capture({ distinctId: `u${i}`, event: 'seen', timestamp: new Date(t) }));
    await client.shutdown();
    await within(30000, 'the events stored', async () => (await s.store.distinct()) >= TIMES.length);
  });

  after(async () => {
    await s?.stop();
  });

  test('18.16 reports itself, and a run prints and answers 18.16\'s SQL', async () => {
    const [{ v }] = await s.store.ch.rows('SELECT version() AS v');
    assert.match(v, /^18\.16\./);
    const query = "SELECT formatDateTime(timestamp, '%H:%i') AS t, arrayJoin(['a', 'b']) AS x FROM events WHERE x != 'b' ORDER BY t";
    let r = await s.call('POST', E, { name: 'minute-and-array', query: { kind: 'HogQLQuery', query } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await s.call('POST', `${E}minute-and-array/run`, { debug: true });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    // 18.16's rules: the minute is %M there, and the alias is the expression again
    assert.ok(r.json.sql.includes("'%H:%M'") && !r.json.sql.includes("'%H:%i'"), r.json.sql);
    assert.ok(r.json.sql.includes("WHERE ((arrayJoin(['a', 'b'])) != 'b')"), r.json.sql);
    // and the server runs it: one row per event, its UTC hour and minute, the array's 'a'
    const want = TIMES.map((t) => [t.slice(11, 16), 'a']).sort();
    assert.deepEqual(r.json.results, want);
  });
});
