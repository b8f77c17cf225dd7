// materialize.test.mjs - materialized HogQL endpoints on both store
// pairs: the table is built in the event store by the api's materializer,
// runs read it (endpoint_materialized) and answer as the query itself
// does (refresh: direct) for every variable value; a read serves the table
// as of its build, not what came later; refusals carry PostHog's reasons.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const DAY = 86400 * 1000;
const BASE = Date.parse('2024-03-01T00:00:00Z');
const EVENTS = ['signup', '$pageview', '$pageview', 'purchase'];

for (const pair of PAIRS) describe(`materialized endpoints: ${pairName(pair)}`, () => {
  let s, E, V;
  const run = async (name, body) => (await s.call('POST', `${E}${name}/run`, body)).json;
  const status = async (name) => (await s.call('GET', `${E}${name}/materialization_status`)).json;
  const capture = async (n, at) => {
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    for (let i = 0; i < n; i++) {
      client.capture({
        distinctId: `user-${i % 4}`,
        event: EVENTS[i % EVENTS.length],
        timestamp: new Date(at + i * 5 * 3600 * 1000), // every 5 hours: days 0 .. n*5/24
        properties: { price: i },
      });
    }
    await client.shutdown();
  };

  before(async () => {
    s = await startPair(pair, { apiEnv: { MATERIALIZE_CHECK: '200ms' } });
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    V = `/api/projects/${s.boot.project_id}/insight_variables/`;
    for (const [name, type] of [['event_name', 'String'], ['since', 'Date'], ['until', 'Date'], ['user', 'String']]) {
      const r = await s.call('POST', V, { name, type, default_value: null });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    await capture(40, BASE);
    await within(30000, 'events stored', async () => (await s.store.distinct()) >= 40);
  });

  after(async () => {
    await s?.stop();
  });

  test('an equality variable: built, read, the same answers as the query itself', async () => {
    let r = await s.call('POST', E, {
      name: 'by-event', is_materialized: true, sync_frequency: '1hour',
      query: { kind: 'HogQLQuery', query: 'SELECT count() AS c, sum(toFloat(properties.price)) AS total FROM events WHERE event = {variables.event_name}' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await within(20000, 'the table built', async () => (await status('by-event')).status === 'Completed');
    const st = await status('by-event');
    assert.equal(st.is_materialized, true);
    assert.equal(st.sync_frequency, '1hour');
    assert.equal(st.error, '');
    assert.match(st.last_materialized_at, /^\d{4}-\d\d-\d\dT/);
    r = await s.call('GET', `${E}by-event/`);
    assert.equal(r.json.is_materialized, true);
    assert.equal(r.json.materialization.status, 'Completed');
    for (const event_name of ['signup', '$pageview', 'purchase', 'nothing']) {
      const mat = await run('by-event', { variables: { event_name } });
      const direct = await run('by-event', { variables: { event_name }, refresh: 'direct' });
      assert.equal(mat.endpoint_materialized, true, JSON.stringify(mat));
      assert.equal(direct.endpoint_materialized, undefined);
      assert.deepEqual(mat.results, direct.results, event_name);
      assert.deepEqual(mat.columns, direct.columns);
      assert.deepEqual(mat.types, direct.types);
    }
    // 10 of each of the 4 events in 40: $pageview twice as often
    assert.deepEqual((await run('by-event', { variables: { event_name: '$pageview' } })).results, [[20, 390]]);
    // the table holds every value's rows: the variable must be given
    r = await s.call('POST', `${E}by-event/run`, {});
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.detail, "Required variable 'event_name' not provided");

    // what came after the build is not in the table until the next one
    await capture(4, BASE + 100 * DAY);
    await within(30000, 'more events stored', async () => (await s.store.distinct()) >= 44);
    const stale = await run('by-event', { variables: { event_name: 'signup' } });
    const live = await run('by-event', { variables: { event_name: 'signup' }, refresh: 'direct' });
    assert.equal(stale.results[0][0], 10);
    assert.equal(live.results[0][0], 11);
  });

  test('range variables: by day, aggregated again, as the query itself for day-aligned values', async () => {
    const r = await s.call('POST', E, {
      name: 'by-day-range', is_materialized: true,
      query: { kind: 'HogQLQuery', query: 'SELECT event, count() AS c, max(toFloat(properties.price)) AS top FROM events WHERE timestamp >= {variables.since} AND timestamp < {variables.until} GROUP BY event' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await within(20000, 'the table built', async () => (await status('by-day-range')).status === 'Completed');
    const sorted = (rows) => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    for (const [since, until] of [['2024-03-01', '2024-03-03'], ['2024-03-02', '2024-03-09'], ['2024-02-01', '2024-04-01'], ['2024-03-05', '2024-03-05']]) {
      const mat = await run('by-day-range', { variables: { since, until } });
      const direct = await run('by-day-range', { variables: { since, until }, refresh: 'direct' });
      assert.equal(mat.endpoint_materialized, true, JSON.stringify(mat));
      assert.deepEqual(sorted(mat.results), sorted(direct.results), `${since} .. ${until}`);
    }
  });

  // More shapes, each answered from its table as by the query itself for
  // every combination of values.
  test('a corpus of shapes: the table answers as the query does', async () => {
    const users = ['user-0', 'user-1', 'user-3', 'nobody'];
    const events = ['signup', '$pageview', 'nothing'];
    const days = [['2024-03-01'], ['2024-03-04'], ['2024-03-09']];
    const corpus = [
      ['per-user', 'SELECT event, count() AS c FROM events WHERE distinct_id = {variables.user} GROUP BY event ORDER BY event', users.map((user) => ({ user }))],
      ['user-and-event', 'SELECT distinct_id, countIf(event = \'$pageview\') AS views, min(toFloat(properties.price)) AS cheapest FROM events WHERE event = {variables.event_name} AND distinct_id = {variables.user} GROUP BY distinct_id', users.flatMap((user) => events.map((event_name) => ({ user, event_name })))],
      ['since-day', 'SELECT count() AS c, min(timestamp) AS first, max(toFloat(properties.price)) AS top FROM events WHERE timestamp >= {variables.since}', days.map(([since]) => ({ since }))],
      ['days-of-event', 'SELECT toDate(timestamp) AS day, count() AS c FROM events WHERE event = {variables.event_name} GROUP BY day ORDER BY day', events.map((event_name) => ({ event_name }))],
    ];
    const sorted = (rows) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    for (const [name, query] of corpus) {
      const r = await s.call('POST', E, { name, is_materialized: true, query: { kind: 'HogQLQuery', query } });
      assert.equal(r.status, 201, `${name}: ${JSON.stringify(r.json)}`);
    }
    for (const [name, , values] of corpus) {
      await within(20000, `${name} built`, async () => (await status(name)).status === 'Completed');
      for (const variables of values) {
        const mat = await run(name, { variables });
        const direct = await run(name, { variables, refresh: 'direct' });
        assert.equal(mat.endpoint_materialized, true, `${name} ${JSON.stringify(mat)}`);
        assert.deepEqual(sorted(mat.results), sorted(direct.results), `${name} ${JSON.stringify(variables)}`);
        assert.deepEqual(mat.types, direct.types, name);
      }
    }
  });

  test('refusals, and turning it off', async () => {
    let r = await s.call('POST', E, {
      name: 'or-query', is_materialized: true,
      query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events WHERE event = {variables.event_name} OR distinct_id = \'x\'' },
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'is_materialized');
    assert.equal(r.json.detail, 'Cannot materialize endpoint: Variables not supported: Variables in OR conditions are not supported for materialization');
    r = await s.call('POST', E, { name: 'plain', query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' }, sync_frequency: 'hourly' });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'sync_frequency');
    r = await s.call('POST', `${E}plain/run`, { refresh: 'direct' });
    assert.equal(r.status, 404); // not created
    r = await s.call('POST', E, { name: 'plain', query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
    assert.equal(r.status, 201);
    r = await s.call('POST', `${E}plain/run`, { refresh: 'direct' });
    assert.equal(r.status, 400);
    assert.match(r.json.detail, /'direct' refresh mode is only valid for materialized endpoints/);

    r = await s.call('PATCH', `${E}by-event/`, { is_materialized: false });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.is_materialized, false);
    assert.deepEqual(r.json.materialization, { can_materialize: true, reason: null });
    const inline = await run('by-event', { variables: { event_name: 'signup' } });
    assert.equal(inline.endpoint_materialized, undefined);
    assert.equal(inline.results[0][0], 11);
    assert.equal((await status('by-event')).is_materialized, false);
  });
});
