// endpoints_timezone.test.mjs - HogQL endpoints in the project's time zone
// (docs/endpoints.md "Time zones"), on both pairs: a project on
// America/New_York, whose clocks go forward on 2024-03-10 (07:00 UTC, a
// 23-hour day), buckets its events on the same days in a HogQL endpoint as
// in an insight endpoint, shows DateTimes with the zone's offset, and reads
// a date string as the zone's wall clock; the same project moved to
// Asia/Kolkata (+05:30) answers in that zone. Expected values are computed
// here from the events with Intl, not by the server.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const EVENTS = [
  '2024-03-09T04:59:59Z', // New York 8 Mar 23:59:59 (EST, -05:00)
  '2024-03-09T05:00:00Z', // 9 Mar 00:00
  '2024-03-10T06:59:59Z', // 10 Mar 01:59:59, the last second of EST
  '2024-03-10T07:00:00Z', // 10 Mar 03:00 EDT (-04:00)
  '2024-03-11T03:59:59Z', // 10 Mar 23:59:59
  '2024-03-11T04:00:00Z', // 11 Mar 00:00
  '2024-03-12T12:00:00Z', // 12 Mar 08:00
];

// The wall clock of an instant in zone: { date: 'YYYY-MM-DD', hour, iso with offset }.
function wall(instant, zone) {
  const t = new Date(instant);
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-CA', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(t).map((p) => [p.type, p.value]));
  const local = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  const off = Math.round((local - t.getTime()) / 60000);
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  const tz = off === 0 ? 'Z' : `${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  return { date, hour: +parts.hour, iso: `${date}T${parts.hour}:${parts.minute}:${parts.second}${tz}`, off };
}

// The instant a wall-clock midnight of date is in zone, as an ISO string with its offset.
function midnight(date, zone) {
  // the offset at that midnight: try the offset of noon that day, then correct once
  const guess = Date.parse(`${date}T00:00:00Z`);
  let t = guess - wall(guess, zone).off * 60000;
  t = guess - wall(t, zone).off * 60000;
  return wall(t, zone).iso;
}

function counts(keys) {
  const m = new Map();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

for (const pair of PAIRS) describe(`HogQL in the project's zone: ${pairName(pair)}`, () => {
  let s, E;
  const make = async (name, query) => {
    const r = await s.call('POST', E, { name, query });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  };
  const run = async (name) => {
    const r = await s.call('POST', `${E}${name}/run`, {});
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json;
  };
  const hogql = (query) => ({ kind: 'HogQLQuery', query });
  const zone = async (timezone) => {
    const r = await s.call('PATCH', `/api/projects/${s.boot.project_id}/`, { timezone });
    assert.equal(r.status, 200, JSON.stringify(r.json));
  };

  before(async () => {
    s = await startPair(pair, { apiEnv: { MATERIALIZE_CHECK: '200ms' } });
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    await zone('America/New_York');
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    for (const [i, ts] of EVENTS.entries()) client.capture({ distinctId: `u${i % 3}`, event: '$pageview', timestamp: new Date(ts), properties: { n: i } });
    await client.shutdown();
    await within(30000, 'the events stored', async () => (await s.store.distinct()) >= EVENTS.length);
  });

  after(async () => {
    await s?.stop();
  });

  test('day buckets: the HogQL endpoint and the insight agree, across the spring-forward day', async () => {
    const zoneName = 'America/New_York';
    await make('ins-days', {
      kind: 'TrendsQuery', interval: 'day', dateRange: { date_from: '2024-03-08', date_to: '2024-03-12' },
      series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview' }],
    });
    const ins = (await run('ins-days')).results[0];
    await make('hq-days', hogql(
      "SELECT toDate(timestamp) AS d, toStartOfDay(timestamp) AS s, count() AS c FROM events WHERE event = '$pageview' AND timestamp >= '2024-03-08' AND timestamp < '2024-03-13' GROUP BY d, s ORDER BY d"));
    const hq = await run('hq-days');
    const want = counts(EVENTS.map((e) => wall(e, zoneName).date));
    assert.deepEqual(hq.results.map(([d, , c]) => [d, c]), want);
    // the insight's days, non-empty ones, are the same buckets
    const fromInsight = ins.days.map((d, i) => [d, ins.data[i]]).filter(([, c]) => c > 0);
    assert.deepEqual(fromInsight, want);
    // a day's start is the zone's midnight, written with that day's offset
    assert.deepEqual(hq.results.map(([d, st]) => [d, st]), want.map(([d]) => [d, midnight(d, zoneName)]));
    assert.ok(hq.results.some(([, st]) => st.endsWith('-05:00')) && hq.results.some(([, st]) => st.endsWith('-04:00')));
    assert.deepEqual(hq.types.map(([, t]) => t), ['Date', `DateTime('${zoneName}')`, 'Int64']);
  });

  test('values in the zone: timestamps with their offset, hours, formatted text, a wall-clock string', async () => {
    const zoneName = 'America/New_York';
    await make('hq-values', hogql(
      "SELECT timestamp, toHour(timestamp) AS h, formatDateTime(timestamp, '%Y-%m-%d %H:%i') AS f FROM events ORDER BY timestamp"));
    const r = await run('hq-values');
    assert.deepEqual(r.results, EVENTS.map((e) => {
      const w = wall(e, zoneName);
      return [w.iso, w.hour, w.iso.slice(0, 16).replace('T', ' ')];
    }));
    // '2024-03-10 03:00:00' is New York's wall clock: 07:00 UTC, the first EDT second
    await make('hq-since', hogql("SELECT count() FROM events WHERE timestamp >= '2024-03-10 03:00:00'"));
    const since = (await run('hq-since')).results[0][0];
    assert.equal(since, EVENTS.filter((e) => Date.parse(e) >= Date.parse('2024-03-10T07:00:00Z')).length);
    // a zone named in the query: Tokyo's day, whatever the project's
    await make('hq-tokyo', hogql("SELECT toDate(toTimeZone(timestamp, 'Asia/Tokyo')) AS d, count() FROM events GROUP BY d ORDER BY d"));
    assert.deepEqual((await run('hq-tokyo')).results, counts(EVENTS.map((e) => wall(e, 'Asia/Tokyo').date)));
  });

  test('a materialized endpoint answers in the zone too (its UTC table is not read)', async () => {
    const r = await s.call('POST', E, { name: 'hq-mat', is_materialized: true, query: hogql('SELECT toDate(timestamp) AS d, count() AS c FROM events GROUP BY d ORDER BY d') });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const status = async () => (await s.call('GET', `${E}hq-mat/`)).json?.materialization?.status;
    await within(20000, 'the table built', async () => (await status()) === 'Completed');
    const want = counts(EVENTS.map((e) => wall(e, 'America/New_York').date));
    assert.deepEqual((await run('hq-mat')).results, want);
  });

  test('the project moved to Asia/Kolkata answers in that zone', async () => {
    await zone('Asia/Kolkata');
    await make('hq-kolkata', hogql('SELECT timestamp, toDate(timestamp) AS d, toStartOfHour(timestamp) AS h FROM events ORDER BY timestamp'));
    const r = await run('hq-kolkata');
    assert.deepEqual(r.results.map(([t, d]) => [t, d]), EVENTS.map((e) => [wall(e, 'Asia/Kolkata').iso, wall(e, 'Asia/Kolkata').date]));
    for (const [, , h] of r.results) assert.match(h, /T\d\d:00:00\+05:30$/);
    // an endpoint run before the move answers in the new zone too (not from the old cache)
    const again = await run('hq-values');
    assert.deepEqual(again.results.map(([t]) => t), EVENTS.map((e) => wall(e, 'Asia/Kolkata').iso));
    await zone('America/New_York');
  });
});

for (const pair of PAIRS) describe(`the project's week start: ${pairName(pair)}`, () => {
  let s, E, P;
  before(async () => {
    s = await startPair(pair, {});
    P = `/api/projects/${s.boot.project_id}/`;
    E = `${P}endpoints/`;
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    // Wednesday 13 Mar and Sunday 17 Mar 2024 (UTC)
    for (const ts of ['2024-03-13T12:00:00Z', '2024-03-17T12:00:00Z']) client.capture({ distinctId: 'u', event: 'e', timestamp: new Date(ts) });
    await client.shutdown();
    await within(30000, 'the events stored', async () => (await s.store.distinct()) >= 1);
    await within(30000, 'both events', async () => {
      const r = await s.call('POST', E, { name: `probe${Date.now()}`, query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
      return r.status === 201 && (await s.call('POST', `${E}${r.json.name}/run`, {})).json?.results?.[0]?.[0] === 2;
    });
  });
  after(async () => {
    await s?.stop();
  });

  test('week_start_day: 0, 1 or null, validated; toStartOfWeek follows it', async () => {
    assert.equal((await s.call('GET', P)).json.week_start_day, null);
    const weeks = async (name) => {
      const c = await s.call('POST', E, { name, query: { kind: 'HogQLQuery', query: 'SELECT toStartOfWeek(timestamp) AS w, count() FROM events GROUP BY w ORDER BY w' } });
      assert.equal(c.status, 201, JSON.stringify(c.json));
      const r = await s.call('POST', `${E}${name}/run`, {});
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.results;
    };
    const insightWeeks = async (name) => {
      const c = await s.call('POST', E, { name, query: {
        kind: 'TrendsQuery', interval: 'week', dateRange: { date_from: '2024-03-11', date_to: '2024-03-17' },
        series: [{ kind: 'EventsNode', event: 'e' }] } });
      assert.equal(c.status, 201, JSON.stringify(c.json));
      const r = await s.call('POST', `${E}${name}/run`, {});
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.results[0].days.map((d, i) => [d, r.json.results[0].data[i]]).filter(([, n]) => n > 0);
    };
    // Sunday weeks: 10 Mar holds Wednesday 13, 17 Mar starts its own; the insight's weeks the same
    assert.deepEqual(await weeks('w-sunday'), [['2024-03-10', 1], ['2024-03-17', 1]]);
    assert.deepEqual(await insightWeeks('iw-sunday'), [['2024-03-10', 1], ['2024-03-17', 1]]);
    let r = await s.call('PATCH', P, { week_start_day: 1 });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.week_start_day, 1);
    // Monday weeks: both in the week of Monday 11 Mar
    await within(10000, 'the Monday weeks', async () => JSON.stringify(await weeks(`w-monday-${Date.now()}`)) === JSON.stringify([['2024-03-11', 2]]));
    assert.deepEqual(await insightWeeks('iw-monday'), [['2024-03-11', 2]]);
    for (const bad of [2, -1, 'monday', 1.5]) {
      r = await s.call('PATCH', P, { week_start_day: bad });
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
      assert.equal(r.json.attr, 'week_start_day');
    }
    r = await s.call('PATCH', P, { timezone: 'Mars/Olympus' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.attr, 'timezone');
    r = await s.call('PATCH', P, { week_start_day: null });
    assert.equal(r.status, 200);
    assert.equal(r.json.week_start_day, null);
    assert.equal((await s.call('GET', P)).json.week_start_day, null);
    // a new project may say it at once
    r = await s.call('POST', '/api/projects/', { name: 'mondays', week_start_day: 1, timezone: 'Asia/Kolkata' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.week_start_day, 1);
    assert.equal((await s.call('GET', `/api/projects/${r.json.id}/`)).json.week_start_day, 1);
    r = await s.call('POST', '/api/projects/', { name: 'bad', week_start_day: 7 });
    assert.equal(r.status, 400, r.text);
  });
});
