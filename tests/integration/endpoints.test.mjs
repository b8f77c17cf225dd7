// endpoints.test.mjs - saved HogQL queries over HTTP on both pairs of
// backends (lib/suite.mjs): posthog-node captures a small fixed dataset
// through ingest, the writer stores it, and the api's endpoints run
// queries over it with typed variables, versions and the Redis cache;
// every error message docs/endpoints.md lists and PostHog's run checks.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { redisCommand } from './lib/redis.mjs';
import { within } from './lib/rawhttp.mjs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { OpenAPIClientAxios } from 'openapi-client-axios';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TESTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Every document passes swagger-parser's validation and redocly's lint
// (recommended rules; paths end in "/" as PostHog's, so that rule is off).
async function checkOpenApi(doc) {
  await SwaggerParser.validate(structuredClone(doc));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-openapi-'));
  try {
    fs.writeFileSync(path.join(dir, 'doc.json'), JSON.stringify(doc));
    fs.writeFileSync(path.join(dir, 'redocly.yaml'), 'extends:\n  - recommended\nrules:\n  no-path-trailing-slash: off\n  info-license: off\n  no-server-example.com: off\n');
    await promisify(execFile)(path.join(TESTS, 'node_modules/.bin/redocly'), ['lint', '--config', path.join(dir, 'redocly.yaml'), path.join(dir, 'doc.json')], { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const BASE = Date.parse('2024-03-01T12:00:00Z');

for (const pair of PAIRS) describe(`endpoints: ${pairName(pair)}`, () => {
  let s, P, E, V;

  before(async () => {
    s = await startPair(pair, {});
    P = s.boot.project_id;
    E = `/api/projects/${P}/endpoints/`;
    V = `/api/projects/${P}/insight_variables/`;
    const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    const browsers = ['Chrome', 'Firefox', 'Safari'];
    for (let i = 0; i < 30; i++) {
      client.capture({
        distinctId: `user-${i % 5}`,
        event: i % 3 === 0 ? 'signup' : '$pageview',
        timestamp: new Date(BASE + i * 3600 * 1000),
        properties: { $browser: browsers[i % 3], price: i * 1.5, n: i },
      });
    }
    await client.shutdown();
    await within(30000, 'all 30 events stored', async () => (await s.store.distinct()) >= 30);
  });

  after(async () => {
    await s?.stop();
  });

  let varId;
  test('variables: create, code name from the name, type checks', async () => {
    let r = await s.call('POST', V, { name: 'Event name', type: 'String', default_value: null });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.equal(r.json.code_name, 'event_name');
    assert.match(r.json.id, /^[0-9a-f-]{36}$/);
    varId = r.json.id;
    r = await s.call('POST', V, { name: 'Min price', code_name: 'min_price', type: 'Number', default_value: 3 });
    assert.equal(r.status, 201);
    r = await s.call('POST', V, { name: 'bad', type: 'Number', default_value: 'x' });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'default_value');
    r = await s.call('POST', V, { name: 'other', type: 'Color' });
    assert.equal(r.status, 400);
    r = await s.call('POST', V, { name: 'again', code_name: 'event_name', type: 'String' });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'code_name');
    r = await s.call('GET', V);
    assert.equal(r.status, 200);
    assert.equal(r.json.results.length, 2);
  });

  test('create, run with a variable, the cache, force', async () => {
    let r = await s.call('POST', E, {
      name: 'events-by-name',
      description: 'Counts one event',
      query: { kind: 'HogQLQuery', query: 'SELECT event, count() AS c, sum(toFloat(properties.price)) AS total FROM events WHERE event = {variables.event_name} GROUP BY event' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.equal(r.json.name, 'events-by-name');
    assert.equal(r.json.current_version, 1);
    assert.equal(r.json.endpoint_path, `/api/environments/${P}/endpoints/events-by-name/run`);
    assert.deepEqual(Object.values(r.json.query.variables).map((v) => v.code_name), ['event_name']);
    // the variable is one side of an = in WHERE: the query could be materialized
    assert.deepEqual(r.json.materialization, { can_materialize: true, reason: null });
    assert.equal(r.json.is_materialized, false);

    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: 'signup' } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.columns, ['event', 'c', 'total'], JSON.stringify(r.json));
    // signups are i = 0, 3, ..., 27: 10 of them, prices 1.5 * (0 + 3 + ... + 27)
    assert.deepEqual(r.json.results, [['signup', 10, 1.5 * 135]]);
    assert.equal(r.json.hasMore, false);
    assert.equal(r.json.is_cached, false);
    assert.equal(r.json.endpoint_version, 1);
    assert.deepEqual(r.json.types.map((t) => t[0]), ['event', 'c', 'total']);

    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: 'signup' } });
    assert.equal(r.json.is_cached, true);
    assert.deepEqual(r.json.results, [['signup', 10, 1.5 * 135]]);
    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: 'signup' }, refresh: 'force' });
    assert.equal(r.json.is_cached, false);
    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: '$pageview' } });
    assert.deepEqual(r.json.results.map((x) => x.slice(0, 2)), [['$pageview', 20]]);
  });

  test('the documented errors, exactly', async () => {
    let r = await s.call('POST', `${E}events-by-name/run`, {});
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, "Required variable 'event_name' not provided");
    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: 'x', nope: 1, also: 2 } });
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, 'Unknown variable(s): also, nope');
    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: 42 } });
    assert.equal(r.status, 400);
    assert.match(r.json.detail, /event_name/);

    r = await s.call('POST', E, { name: 'undefined-var', query: { kind: 'HogQLQuery', query: 'SELECT {variables.zzz}, {variables.aaa}' } });
    assert.equal(r.status, 400);
    assert.equal(r.json.type, 'validation_error');
    assert.equal(r.json.attr, 'query');
    // PostHog's words, but pointing at this deployment's variables route (not PostHog cloud's)
    assert.equal(r.json.detail, `Query references undefined variable(s): aaa, zzz. Create each first: POST /api/projects/${P}/insight_variables/.`);
    r = await s.call('POST', E, {
      name: 'bad-uuid',
      query: { kind: 'HogQLQuery', query: 'SELECT {variables.q}', variables: { 'not-a-uuid': { variableId: 'not-a-uuid', code_name: 'q' } } },
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, 'Variable ID(s) not valid UUIDs: not-a-uuid. ');
    const ghost = '0190b6e4-0000-7000-8000-000000000000';
    r = await s.call('POST', E, {
      name: 'missing-var',
      query: { kind: 'HogQLQuery', query: 'SELECT {variables.q}', variables: { [ghost]: { variableId: ghost, code_name: 'q' } } },
    });
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, `Variable ID(s) not found: ${ghost}. Make sure the variables exist in /api/projects/${P}/insight_variables/.`);

    r = await s.call('POST', E, { name: '9lives', query: { kind: 'HogQLQuery', query: 'SELECT 1' } });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'name');
    r = await s.call('POST', E, { name: 'x' });
    assert.equal(r.json.detail, 'Must specify query');
    r = await s.call('POST', E, { name: 'bad-sql', query: { kind: 'HogQLQuery', query: 'SELECT * FROM system.tables' } });
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, 'Invalid HogQL query: Unknown table `system.tables`. Tables: events, persons, groups, person_distinct_ids');
    r = await s.call('POST', E, { name: 'events-by-name', query: { kind: 'HogQLQuery', query: 'SELECT 1' } });
    assert.equal(r.status, 400);
    assert.equal(r.json.attr, 'name');
    r = await s.call('POST', `${E}events-by-name/run`, { variables: { event_name: 'x' }, refresh: 'direct' });
    assert.equal(r.status, 400);
    assert.match(r.json.detail, /^'direct' refresh mode is only valid for materialized endpoints/);
    r = await s.call('POST', `${E}events-by-name/run`, { query_override: {} });
    assert.equal(r.json.detail, 'query_override is not allowed. Use variables instead.');
    r = await s.call('POST', `${E}no-such-endpoint/run`, {});
    assert.equal(r.status, 404);
  });

  // A cached run finds its Redis key without compiling when the api
  // compiled the same version with the same values before (the memo in
  // endpoint_run.c): the answer must still follow the values, the page
  // and what Redis holds.
  test('cached runs follow the values, the page, and a Redis entry gone', async () => {
    let r = await s.call('POST', E, { name: 'dearer-than', query: { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events WHERE toFloat(properties.price) >= {variables.min_price}' } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const run = async (body = {}) => (await s.call('POST', `${E}dearer-than/run`, body)).json;
    // prices are 1.5 * i for i < 30: at least 3 is i >= 2
    r = await run();
    assert.deepEqual([r.results, r.is_cached], [[[28]], false]);
    assert.deepEqual([(r = await run()).results, r.is_cached], [[[28]], true]);
    // the stored value (the variable's default when the endpoint was made)
    // is the default; another value is another answer
    r = await run({ variables: { min_price: 30 } });
    assert.deepEqual([r.results, r.is_cached], [[[10]], false]); // i >= 20
    assert.deepEqual((await run({ variables: { min_price: 30 } })).results, [[10]]);
    r = await run({ variables: { min_price: 3 } });
    assert.deepEqual([r.results, r.is_cached], [[[28]], true]);
    r = await run({ variables: { min_price: 3 }, offset: 1 });
    assert.deepEqual([r.results, r.offset], [[], 1]);
    // Redis lost every answer: the next run computes again
    const keys = await redisCommand(s.redis.port, 'KEYS', `endpoint_cache:${P}:*`);
    assert.ok(keys.length >= 3, JSON.stringify(keys));
    await redisCommand(s.redis.port, 'DEL', ...keys);
    r = await run({ variables: { min_price: 3 } });
    assert.deepEqual([r.results, r.is_cached], [[[28]], false]);
    r = await run({ variables: { min_price: 3 }, debug: true });
    assert.equal(r.is_cached, true);
    assert.match(r.sql, /SELECT/);
  });

  test('materialization: PostHog\'s reasons when a query cannot be', async () => {
    for (const [name, query, reason] of [
      ['mat-or', 'SELECT count() FROM events WHERE event = {variables.event_name} OR distinct_id = \'x\'', 'Variables not supported: Variables in OR conditions are not supported for materialization'],
      ['mat-having', 'SELECT event, count() AS c FROM events GROUP BY event HAVING c > {variables.min_price}', 'Variables not supported: Variable used in HAVING clause are not supported for materialization.'],
      // a Number range: the table keeps days, so it would answer from toStartOfDay(price)
      ['mat-range-number', 'SELECT count() FROM events WHERE toFloat(properties.price) >= {variables.min_price}', "Variables not supported: Variable 'min_price' is compared by range with a column that is not a date: only date ranges can be materialized"],
      ['mat-plain', 'SELECT count() FROM events', null],
    ]) {
      const r = await s.call('POST', E, { name, query: { kind: 'HogQLQuery', query } });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      assert.deepEqual(r.json.materialization, { can_materialize: reason === null, reason }, name);
    }
  });

  test('a bare GET runs it; limit, offset and hasMore', async () => {
    let r = await s.call('POST', E, { name: 'all-events', query: { kind: 'HogQLQuery', query: 'SELECT n FROM (SELECT toInt(properties.n) AS n FROM events) ORDER BY n' } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await s.call('GET', `${E}all-events/run`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.results.length, 30);
    assert.equal(r.json.hasMore, false);
    r = await s.call('POST', `${E}all-events/run`, { limit: 10, offset: 5 });
    assert.deepEqual(r.json.results.map((x) => x[0]), [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    assert.equal(r.json.hasMore, true);
    assert.equal(r.json.limit, 10);
    assert.equal(r.json.offset, 5);
  });

  test('versions: a query change is version 2; version 1 still runs; a version can be retired', async () => {
    let r = await s.call('PATCH', `${E}all-events/`, { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.current_version, 2);
    assert.equal(r.json.versions_count, 2);
    r = await s.call('PATCH', `${E}all-events/`, { description: 'same query, no new version' });
    assert.equal(r.json.current_version, 2);
    r = await s.call('POST', `${E}all-events/run`, {});
    assert.deepEqual(r.json.results, [[30]]);
    assert.equal(r.json.endpoint_version, 2);
    r = await s.call('POST', `${E}all-events/run?version=1`, { limit: 2 });
    assert.equal(r.json.endpoint_version, 1);
    assert.deepEqual(r.json.results, [[0], [1]]);
    r = await s.call('GET', `${E}all-events/versions/`);
    assert.deepEqual(r.json.map((v) => v.version), [2, 1]);
    r = await s.call('PATCH', `${E}all-events/?version=1`, { is_active: false });
    assert.equal(r.status, 200);
    r = await s.call('POST', `${E}all-events/run`, { version: 1 });
    assert.equal(r.status, 400);
    assert.equal(r.json.detail, 'Version 1 is inactive and cannot be executed.');
    r = await s.call('POST', `${E}all-events/run`, { version: 9 });
    assert.equal(r.status, 404);
    assert.deepEqual(r.json, { type: 'invalid_request', code: 'not_found', detail: "Version 9 not found for endpoint 'all-events'", attr: 'version', current_version: 2 });
    r = await s.call('POST', `${E}all-events/run?version=abc`, {});
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { type: 'validation_error', code: 'invalid', detail: 'Invalid version parameter: abc', attr: 'version' });
    r = await s.call('PATCH', `${E}all-events/`, { is_active: false });
    r = await s.call('POST', `${E}all-events/run`, {});
    assert.equal(r.status, 404, 'an inactive endpoint is not found');
    r = await s.call('DELETE', `${E}all-events/`);
    assert.equal(r.status, 204);
    r = await s.call('GET', `${E}all-events/`);
    assert.equal(r.status, 404);
  });

  test('the same routes under /api/environments/; OpenAPI document', async () => {
    let r = await s.call('POST', `/api/environments/${P}/endpoints/events-by-name/run`, { variables: { event_name: 'signup' } });
    assert.equal(r.status, 200);
    r = await s.call('GET', `${E}events-by-name/openapi.json`);
    assert.equal(r.status, 200);
    const doc = r.json;
    assert.equal(doc.openapi, '3.0.3');
    assert.equal(doc.info.title, 'events-by-name');
    assert.equal(doc.info.version, '1');
    const op = doc.paths[`/api/projects/${P}/endpoints/events-by-name/run`].post;
    assert.equal(op.operationId, 'run_events_by_name');
    assert.equal(op.summary, 'Execute events-by-name');
    assert.deepEqual(op.security, [{ PersonalAPIKey: [] }]);
    assert.deepEqual(doc.components.securitySchemes.PersonalAPIKey.type, 'http');
    assert.deepEqual(doc.components.schemas.Variables.required, ['event_name']);
    assert.equal(doc.components.schemas.Variables.properties.event_name.type, 'string');
    assert.equal(op.requestBody.required, true);
    await checkOpenApi(doc);
    // a client made from the document alone (openapi-client-axios builds
    // one method per operationId) runs the endpoint and gets its rows
    const api = new OpenAPIClientAxios({
      definition: doc,
      withServer: { url: s.apiUrl },
      axiosConfigDefaults: { headers: { Authorization: `Bearer ${s.boot.personal_api_key}` } },
    });
    const client = await api.init();
    const ran = await client.run_events_by_name(null, { variables: { event_name: 'signup' } });
    assert.equal(ran.status, 200);
    assert.deepEqual(ran.data.columns, ['event', 'c', 'total']);
    assert.deepEqual(ran.data.results, [['signup', 10, 1.5 * 135]]);
    // a version's document, and one without variables
    r = await s.call('POST', E, { name: 'plain_count', query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
    assert.equal(r.status, 201);
    r = await s.call('GET', `${E}plain_count/openapi.json?version=1`);
    assert.equal(r.status, 200);
    assert.equal(r.json.info.version, '1');
    assert.equal(r.json.components.schemas.Variables, undefined);
    assert.equal(r.json.paths[`/api/projects/${P}/endpoints/plain_count/run`].post.requestBody.required, false);
    await checkOpenApi(r.json);
    r = await s.call('GET', `${E}plain_count/openapi.json?version=7`);
    assert.equal(r.status, 404);
  });

  test('without a key: 401; a key without the endpoint scope: 403; endpoint:read runs', async () => {
    let r = await fetch(`${s.apiUrl}${E}events-by-name/run`, { method: 'POST' });
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
    const key = async (scopes) => (await s.call('POST', '/api/personal_api_keys/', { label: scopes.join(' '), scopes })).json.value;
    const flagsOnly = await key(['feature_flag:read']);
    const reader = await key(['endpoint:read']);
    const as = (k, method, p, body) => fetch(`${s.apiUrl}${p}`, { method, headers: { Authorization: `Bearer ${k}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    r = await as(flagsOnly, 'POST', `${E}events-by-name/run`, { variables: { event_name: 'signup' } });
    assert.equal(r.status, 403);
    assert.equal((await r.json()).detail, "API key missing required scope 'endpoint:read'");
    r = await as(reader, 'POST', `${E}events-by-name/run`, { variables: { event_name: 'signup' } });
    assert.equal(r.status, 200, 'a POST run only reads');
    r = await as(reader, 'POST', E, { name: 'nope', query: { kind: 'HogQLQuery', query: 'SELECT 1' } });
    assert.equal(r.status, 403);
    assert.equal((await r.json()).detail, "API key missing required scope 'endpoint:write'");
  });
});
