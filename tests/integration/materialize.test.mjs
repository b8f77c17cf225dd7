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
        properties: { price: i, even: i % 2 === 0, half: i / 2 },
      });
    }
    await client.shutdown();
  };

  before(async () => {
    s = await startPair(pair, { apiEnv: { MATERIALIZE_CHECK: '200ms' } });
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    V = `/api/projects/${s.boot.project_id}/insight_variables/`;
    for (const [name, type] of [['event_name', 'String'], ['since', 'Date'], ['until', 'Date'], ['user', 'String'],
      ['n', 'Number'], ['flag', 'Boolean'], ['names', 'List'], ['at', 'String']]) {
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

  test("an aggregate that cannot be read again, a value without events: the query answers its one row", async () => {
    // uniqExact cannot be aggregated again from stored rows, so the table is
    // read as stored; for a value with no events it holds no row, where the
    // query answers one (0, 0): that run answers from the query itself
    const query = 'SELECT count() AS c, uniqExact(distinct_id) AS users FROM events WHERE event = {variables.event_name}';
    const r = await s.call('POST', E, { name: 'users-by-event', is_materialized: true, query: { kind: 'HogQLQuery', query } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await within(20000, 'the table built', async () => (await status('users-by-event')).status === 'Completed');
    const mat = await run('users-by-event', { variables: { event_name: 'purchase' } });
    assert.equal(mat.endpoint_materialized, true, JSON.stringify(mat));
    assert.deepEqual(mat.results, (await run('users-by-event', { variables: { event_name: 'purchase' }, refresh: 'direct' })).results);
    const none = await run('users-by-event', { variables: { event_name: 'nothing' } });
    assert.deepEqual(none.results, [[0, 0]], JSON.stringify(none));
    assert.equal(none.endpoint_materialized, undefined);
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

  // Every variable type (String, Number as an integer and a float,
  // Boolean, List, Date, a date-time given as a String) and every operator
  // the materializer accepts (=, and >=, >, <, <= on date columns), each
  // answered from its table exactly as by the query itself, for values on
  // and off the table's day buckets. A run the table cannot answer exactly
  // (a list value, a range value inside a day) is answered by the query.
  test('every variable type and operator: the table answers as the query does', async () => {
    const days = ['2024-03-01', '2024-03-02', '2024-03-05', '2024-03-09', '2024-04-01'];
    const times = ['2024-03-02 00:00:00', '2024-03-02 12:00:00', '2024-03-05 09:59:59'];
    const corpus = [
      // null and absent: required either way, one answer (400) from both
      ['t-string-eq', 'SELECT count() AS c FROM events WHERE event = {variables.event_name}', [...['signup', 'nothing', '', null].map((event_name) => ({ event_name })), {}]],
      ['t-number-eq', 'SELECT event, count() AS c FROM events WHERE toInt(properties.price) = {variables.n} GROUP BY event', [0, 5, 39, 100, -1].map((n) => ({ n }))],
      ['t-float-eq', 'SELECT count() AS c, sum(toInt(properties.price)) AS s FROM events WHERE toFloat(properties.half) = {variables.n}', [0, 2.5, 3, 19.5, 0.1].map((n) => ({ n }))],
      ['t-bool-eq', 'SELECT event, count() AS c FROM events WHERE properties.even = {variables.flag} GROUP BY event', [true, false].map((flag) => ({ flag }))],
      ['t-list-eq', 'SELECT event, count() AS c FROM events WHERE event = {variables.names} GROUP BY event', [['signup'], ['signup', 'purchase'], 'purchase'].map((names) => ({ names }))],
      ['t-date-eq', 'SELECT count() AS c FROM events WHERE toDate(timestamp) = {variables.since}', days.map((since) => ({ since }))],
      ['t-date-ge-lt', 'SELECT event, count() AS c FROM events WHERE timestamp >= {variables.since} AND timestamp < {variables.until} GROUP BY event', days.flatMap((since) => days.map((until) => ({ since, until })))],
      ['t-todate-gt-le', 'SELECT count() AS c, max(toInt(properties.price)) AS top FROM events WHERE toDate(timestamp) > {variables.since} AND toDate(timestamp) <= {variables.until}', days.flatMap((since) => days.map((until) => ({ since, until })))],
      ['t-datetime-ge', 'SELECT count() AS c FROM events WHERE timestamp >= {variables.at}', [...days, ...times].map((at) => ({ at }))],
      ['t-datetime-lt', 'SELECT count() AS c, min(toInt(properties.price)) AS low FROM events WHERE timestamp < {variables.at}', [...days, ...times].map((at) => ({ at }))],
    ];
    const sorted = (rows) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    for (const [name, query] of corpus) {
      const r = await s.call('POST', E, { name, is_materialized: true, query: { kind: 'HogQLQuery', query } });
      assert.equal(r.status, 201, `${name}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.is_materialized, true, name);
    }
    let fromTable = 0, refused = 0;
    for (const [name, , values] of corpus) {
      await within(20000, `${name} built`, async () => (await status(name)).status === 'Completed');
      for (const variables of values) {
        const mat = await s.call('POST', `${E}${name}/run`, { variables });
        const direct = await s.call('POST', `${E}${name}/run`, { variables, refresh: 'direct' });
        const what = `${name} ${JSON.stringify(variables)}`;
        assert.equal(mat.status, direct.status, `${what}: ${JSON.stringify(mat.json)} / ${JSON.stringify(direct.json)}`);
        if (direct.status !== 200) {
          assert.deepEqual(mat.json, direct.json, what);
          refused++;
          continue;
        }
        if (mat.json.endpoint_materialized) fromTable++;
        assert.deepEqual(sorted(mat.json.results), sorted(direct.json.results), what);
        assert.deepEqual(mat.json.types, direct.json.types, what);
      }
    }
    // the values find rows: the equalities above are not of empty answers
    assert.deepEqual((await run('t-number-eq', { variables: { n: 5 } })).results, [['$pageview', 1]]);
    assert.deepEqual((await run('t-float-eq', { variables: { n: 2.5 } })).results, [[1, 5]]);
    // (a Boolean against a JSON boolean property: the table and the query
    // agree, but the stores do not yet: SQLite finds no rows, ClickHouse
    // refuses String = UInt8; the compiler's to settle, reported)
    // a range inside a day is the query's: the table keeps days
    const inside = await run('t-datetime-ge', { variables: { at: '2024-03-02 12:00:00' } });
    assert.equal(inside.endpoint_materialized, undefined);
    // most runs are the table's: the fallback is for what it cannot answer
    const total = corpus.reduce((n, [, , values]) => n + values.length, 0);
    assert.ok(refused >= 2, 'null and absent values are refused');
    console.log(`# ${fromTable} of ${total} runs answered from their tables`);
    assert.ok(fromTable >= total * 0.6, `${fromTable} of ${total}`);
  });

  test('refusals, and turning it off', async () => {
    let r = await s.call('POST', E, {
      name: 'or-query', is_materialized: true,
      query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events WHERE event = {variables.event_name} OR distinct_id = \'x\'' },
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'is_materialized');
    assert.equal(r.json.detail, 'Cannot materialize endpoint: Variables not supported: Variables in OR conditions are not supported for materialization');
    // a date-time column's table keeps days: > and <= would miss or add a day's rows
    for (const query of ['SELECT count() FROM events WHERE timestamp > {variables.since}', 'SELECT count() FROM events WHERE {variables.since} >= timestamp']) {
      r = await s.call('POST', E, { name: 'strict-range', is_materialized: true, query: { kind: 'HogQLQuery', query } });
      assert.equal(r.status, 400, query);
      assert.equal(r.json.detail, "Cannot materialize endpoint: Variables not supported: Variable 'since' is compared with > or <= to a date-time column: its table keeps days, so only >= and < can be materialized (or compare toDate(column))");
    }
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
