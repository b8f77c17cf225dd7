// endpoints_errors.test.mjs - errors shaped as PostHog's, on both store
// pairs (docs/endpoints.md, "Run" and "Materialization"; issue 28 §3):
//   - a query the event store fails at run time is answered by what
//     failed (PostHog's code name and a fixed text), never with the
//     store's own text (the printed SQL, the compiler's internal names),
//     which is logged with the request id; a failed materialization's
//     error likewise;
//   - every endpoint route answers errors in the one envelope
//     {type, code, detail, attr}; an insight run and a HogQL run give the
//     same variable errors the same way;
//   - is_materialized is true as soon as it is asked for, with the
//     materialization's status beside it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

// What no answer may show: the store's words and the compiler's SQL.
const LEAKS = /properties_keys|\bs0\.|c1_|FINAL|project_id|SELECT|Code:|DB::|Exception|e\.what|step:|events_plugin/;

// Queries the compiler accepts and a store fails at run time: the code
// each store answers with (undefined: that store runs it, or the
// compiler refuses it there; either way without a leak).
const HOSTILE = [
  // ClickHouse fails a 0 divisor of intDiv and %; SQLite (cm_divisor) too
  ['int-div-zero', 'SELECT intDiv(toInt(properties.n), 0) AS d FROM events', { sqlite: 'illegal_division', clickhouse: 'illegal_division' }],
  ['mod-zero', 'SELECT 1 % 0 AS d', { sqlite: 'illegal_division', clickhouse: 'illegal_division' }],
  ['mod-zero-row', 'SELECT length(event) % (length(event) - length(event)) AS d FROM events', { sqlite: 'illegal_division', clickhouse: 'illegal_division' }],
  ['int-div-zero-row', 'SELECT intDiv(10, length(event) - length(event)) AS d FROM events', { sqlite: 'illegal_division', clickhouse: 'illegal_division' }],
  // refused by the compiler (print_tz.c) on both stores before either runs it
  ['bad-zone', "SELECT toTimeZone(timestamp, 'Nowhere/City') AS t FROM events", {}],
  // a pattern per row: SQLite checks it as it meets it (RE2's syntax, no lookahead); 18.16 refuses it when printing
  ['regex-per-row', "SELECT match(event, p) AS m FROM (SELECT event, '(?=s)' AS p FROM events)", { sqlite: 'cannot_compile_regexp' }],
  ['sum-overflow', 'SELECT sum(9223372036854775807) AS s FROM events', { sqlite: 'integer_overflow' }],
  ['cast-text', "SELECT toInt64('x') AS n, toFloat(event) AS f, toDate('nope') AS d FROM events", {}],
];

const ENVELOPE = ['attr', 'code', 'detail', 'type'];
const isEnvelope = (json, extra = []) => {
  assert.deepEqual(Object.keys(json).sort(), [...ENVELOPE, ...extra].sort(), JSON.stringify(json));
  assert.equal(typeof json.detail, 'string');
  assert.equal(typeof json.code, 'string');
  assert.ok(json.attr === null || typeof json.attr === 'string');
};

for (const pair of PAIRS) describe(`endpoint errors: ${pairName(pair)}`, () => {
  let s, E, V;
  const make = async (name, query, extra = {}) => {
    const r = await s.call('POST', E, { name, query, ...extra });
    assert.equal(r.status, 201, `${name}: ${JSON.stringify(r.json)}`);
    return r.json;
  };
  const status = async (name) => (await s.call('GET', `${E}${name}/materialization_status`)).json;
  const trends = (extra) => ({ kind: 'TrendsQuery', dateRange: { date_from: '2024-03-01', date_to: '2024-03-03' }, interval: 'day', series: [{ kind: 'EventsNode', event: null, math: 'total' }], ...extra });

  before(async () => {
    s = await startPair(pair, { apiEnv: { MATERIALIZE_CHECK: '200ms' } });
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    V = `/api/projects/${s.boot.project_id}/insight_variables/`;
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    client.capture({ distinctId: 'u1', event: 'signup', timestamp: new Date('2024-03-01T10:00:00Z'), properties: { n: 3, $browser: 'Chrome' } });
    client.capture({ distinctId: 'u2', event: '$pageview', timestamp: new Date('2024-03-02T10:00:00Z'), properties: { n: 4, $browser: 'Firefox' } });
    await client.shutdown();
    await within(30000, 'events stored', async () => (await s.store.distinct()) >= 2);
    const r = await s.call('POST', V, { name: 'event_name', type: 'String', default_value: null });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  });

  after(async () => {
    await s?.stop();
  });

  test('a query the store fails: its meaning, not its text; the text in the log', async () => {
    let answered = 0;
    for (const [name, query, codes] of HOSTILE) {
      await make(name, { kind: 'HogQLQuery', query });
      const id = `req-errors-${name}`;
      const r = await s.call('POST', `${E}${name}/run`, { refresh: 'force' }, { 'X-Request-Id': id });
      const body = JSON.stringify(r.json);
      assert.ok(r.status < 500, `${name}: ${r.status} ${body}`);
      assert.doesNotMatch(body, LEAKS, name);
      const want = codes[pair.store];
      if (want) {
        assert.equal(r.status, 400, `${name}: ${body}`);
        isEnvelope(r.json);
        assert.equal(r.json.type, 'validation_error');
        assert.equal(r.json.code, want, `${name}: ${body}`);
        assert.match(r.json.detail, /^Query execution failed: [a-z]/);
        // the operator's line: the request, what was answered, the store's words
        await within(3000, `${name} logged`, async () => s.api.stderr().includes(id));
        const line = s.api.stderr().split('\n').find((l) => l.includes(id) && l.includes('answered='));
        assert.ok(line, `${name}: no log line`);
        assert.match(line, new RegExp(`answered=${want} store=.+`));
        answered++;
      } else if (r.status !== 200) {
        isEnvelope(r.json);
      }
    }
    assert.ok(answered >= 1, 'a store failed at least one query');
  });

  test('a materialization the store fails keeps the meaning, not the store\'s text', async () => {
    // each store fails one of these when the table is built
    const query = pair.store === 'clickhouse' ? 'SELECT intDiv(count(), 0) AS d FROM events' : 'SELECT sum(9223372036854775807) AS s FROM events';
    const created = await make('mat-fails', { kind: 'HogQLQuery', query }, { is_materialized: true });
    assert.equal(created.is_materialized, true);
    await within(20000, 'the build failed', async () => (await status('mat-fails')).status === 'Failed');
    const st = await status('mat-fails');
    assert.equal(st.is_materialized, true);
    assert.match(st.error, /^Query execution failed: /);
    assert.doesNotMatch(st.error, LEAKS);
    assert.match(st.error, pair.store === 'clickhouse' ? /division by zero/ : /64-bit range/);
    const r = await s.call('GET', `${E}mat-fails/`);
    assert.equal(r.json.materialization.error, st.error);
    // the run is the query's, failing as it does
    const run = await s.call('POST', `${E}mat-fails/run`, {});
    assert.equal(run.status, 400);
    assert.doesNotMatch(JSON.stringify(run.json), LEAKS);
  });

  test('is_materialized is true at once, with the status beside it', async () => {
    await make('later', { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events' });
    let r = await s.call('PATCH', `${E}later/`, { is_materialized: true, sync_frequency: '1hour' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.is_materialized, true);
    // read with the write: no materializer has claimed it yet
    assert.equal(r.json.materialization.status, 'Pending');
    assert.equal(r.json.materialization.can_materialize, true);
    assert.equal(r.json.materialization.sync_frequency, '1hour');
    assert.equal(r.json.materialization.last_materialized_at, null);
    r = await s.call('GET', `${E}later/`);
    assert.equal(r.json.is_materialized, true);
    assert.ok(['Pending', 'Running', 'Completed'].includes(r.json.materialization.status), r.json.materialization.status);
    await within(20000, 'built', async () => (await status('later')).status === 'Completed');
    r = await s.call('GET', `${E}later/`);
    assert.equal(r.json.is_materialized, true);
    assert.match(r.json.materialization.last_materialized_at, /^\d{4}-\d\d-\d\dT/);
    // turned off: false at once too
    r = await s.call('PATCH', `${E}later/`, { is_materialized: false });
    assert.equal(r.json.is_materialized, false);
    assert.equal(r.json.materialization.status, undefined);
  });

  test('every route answers errors in one envelope; HogQL and insight runs alike', async () => {
    const hogql = await make('by-event', { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events WHERE event = {variables.event_name}' });
    assert.equal(hogql.current_version, 1);
    await make('by-browser', trends({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }));
    await make('mat-by-browser', trends({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }), { is_materialized: true });
    await make('mat-by-event', { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events WHERE event = {variables.event_name}' }, { is_materialized: true });
    for (const name of ['mat-by-browser', 'mat-by-event']) await within(20000, `${name} built`, async () => (await status(name)).status === 'Completed');

    const cases = [
      // [method, path, body, status, detail (string or RegExp), attr, code]
      ['GET', `${E}nope/`, undefined, 404, 'Not found.', null, 'not_found'],
      ['POST', `${E}nope/run`, {}, 404, 'Not found.', null, 'not_found'],
      ['POST', `${E}by-event/run?version=abc`, {}, 400, 'Invalid version parameter: abc', 'version', 'invalid'],
      ['POST', `${E}by-event/run`, { version: 'x' }, 400, 'Invalid version parameter: "x"', 'version', 'invalid'],
      ['PATCH', `${E}by-event/?version=9`, { is_active: false }, 404, 'Version 9 not found', 'version', 'not_found'],
      ['GET', `${E}by-event/versions/9/`, undefined, 404, 'Version 9 not found', 'version', 'not_found'],
      ['GET', `${E}by-event/openapi.json?version=9`, undefined, 404, 'Version 9 not found', 'version', 'not_found'],
      // the value in one pair of quotes (DRF's words), a string's and a number's alike
      ['POST', `${E}by-event/run`, { refresh: 'bogus' }, 400, '"bogus" is not a valid choice: cache, force or direct.', 'refresh', 'invalid'],
      ['POST', `${E}by-event/run`, { refresh: 5 }, 400, '"5" is not a valid choice: cache, force or direct.', 'refresh', 'invalid'],
      ['POST', `${E}by-event/run`, '{"variables": ', 400, /JSON parse error/, null, 'invalid'],
      ['POST', `${E}by-event/run`, {}, 400, "Required variable 'event_name' not provided", 'variables', 'invalid'],
      ['POST', `${E}mat-by-event/run`, {}, 400, "Required variable 'event_name' not provided", 'variables', 'invalid'],
      ['POST', `${E}mat-by-browser/run`, {}, 400, "Required variable '$browser' not provided", 'variables', 'invalid'],
      ['POST', `${E}mat-by-browser/run`, { variables: { $browser: 'Chrome', date_from: '2024-03-01' } }, 400, /^Date variables \(date_from\) cannot be used/, 'variables', 'invalid'],
      ['POST', `${E}by-event/run`, { variables: { event_name: 'x', zz: 1, aa: 2 } }, 400, 'Unknown variable(s): aa, zz', 'variables', 'invalid'],
      ['POST', `${E}by-browser/run`, { variables: { zz: 1, aa: 2 } }, 400, 'Unknown variable(s): aa, zz', 'variables', 'invalid'],
      ['POST', `${E}by-event/run`, { variables: 'x' }, 400, 'Expected an object of variable values.', 'variables', 'invalid'],
      ['POST', `${E}by-browser/run`, { variables: 'x' }, 400, 'Expected an object of variable values.', 'variables', 'invalid'],
      // branches of no common type: refused on both stores as the query is saved
      ['POST', E, { name: 'no-common-type', query: { kind: 'HogQLQuery', query: "SELECT if(event = 'signup', 'a', 1) AS x FROM events" } }, 400, /^Invalid HogQL query: The values of if have no common type: there is no supertype for types String and Int64/, undefined, undefined],
      // a constant offset 0: ClickHouse 18.16 fails it over a column; refused on both
      ['POST', E, { name: 'index-zero', query: { kind: 'HogQLQuery', query: 'SELECT substring(event, 0, 1) AS s FROM events' } }, 400, /^Invalid HogQL query: Indices in strings are 1-based/, undefined, undefined],
      ['POST', E, { name: '1bad', query: { kind: 'HogQLQuery', query: 'SELECT 1' } }, 400, /^Endpoint name must start with a letter/, 'name', undefined],
    ];
    for (const [method, path, body, code, detail, attr, errCode] of cases) {
      const r = await s.call(method, path, body);
      const what = `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.json)}`;
      assert.equal(r.status, code, what);
      isEnvelope(r.json);
      assert.equal(r.json.error, undefined, what);
      if (detail instanceof RegExp) assert.match(r.json.detail, detail, what);
      else assert.equal(r.json.detail, detail, what);
      if (attr !== undefined) assert.equal(r.json.attr, attr, what);
      if (errCode !== undefined) assert.equal(r.json.code, errCode, what);
      assert.equal(r.json.type, code === 404 ? 'invalid_request' : 'validation_error', what);
    }
    // a version past the current one names the current one beside the envelope
    const r = await s.call('POST', `${E}by-event/run`, { version: 9 });
    assert.equal(r.status, 404);
    isEnvelope(r.json, ['current_version']);
    assert.deepEqual(r.json, { type: 'invalid_request', code: 'not_found', detail: "Version 9 not found for endpoint 'by-event'", attr: 'version', current_version: 1 });
    // the same unknown variable, one answer whatever the endpoint's kind
    const a = await s.call('POST', `${E}by-event/run`, { variables: { event_name: 'x', zz: 1 } });
    const b = await s.call('POST', `${E}by-browser/run`, { variables: { zz: 1 } });
    assert.deepEqual(a.json, b.json);
    assert.equal(a.status, b.status);
  });
});
