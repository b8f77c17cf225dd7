// endpoints_arrays.test.mjs - arrays are answered as JSON arrays on both
// stores (docs/endpoints.md "Arrays, tuples and lambdas"): a column typed
// Array(T) as ClickHouse names it, each element by T, strings with quotes
// and backslashes exactly as stored, and what a store cannot run refused
// with the reason.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

for (const pair of PAIRS) {
  describe(`arrays answered as JSON arrays: ${pairName(pair)}`, () => {
    let s;
    let E;
    const labels = ['plain', "it's", 'back\\slash', 'quote"d', 'tab\tand\nnewline', 'caf\u00e9'];

    before(async () => {
      s = await startPair(pair, {});
      E = `/api/projects/${s.boot.project_id}/endpoints/`;
      const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 50, flushInterval: 0 });
      labels.forEach((label, i) => client.capture({
        distinctId: `u${i}`, event: 'e', timestamp: new Date(Date.UTC(2024, 2, 1, i)), properties: { label, n: i, tags: [label, i, null] },
      }));
      await client.shutdown();
      await within(60000, 'the events stored', async () => (await s.store.distinct()) >= labels.length);
    });

    after(async () => { await s?.stop(); });

    async function run(name, query) {
      const c = await s.call('POST', E, { name, query: { kind: 'HogQLQuery', query } });
      assert.equal(c.status, 201, JSON.stringify(c.json));
      return s.call('POST', `${E}${name}/run`, {});
    }

    test('literals and functions: JSON arrays typed Array(T)', async () => {
      const r = await run('lits', "SELECT [1, 2] AS i, ['a', 'b'] AS s, [0.5] AS f, [[1], []] AS n, range(3) AS r, arrayMap(x -> x * 2, [1, 2]) AS m");
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json.results, [[[1, 2], ['a', 'b'], [0.5], [[1], []], [0, 1, 2], [2, 4]]]);
      const types = Object.fromEntries(r.json.types);
      assert.equal(types.i, 'Array(Int64)');
      assert.equal(types.s, 'Array(String)');
      assert.equal(types.f, 'Array(Float64)');
      assert.equal(types.m, 'Array(Int64)');
      for (const v of r.json.results[0]) assert.ok(Array.isArray(v));
    });

    test('stored strings come back exactly, sorted by groupArray', async () => {
      const r = await run('labels', 'SELECT groupArray(properties.label) AS l, groupArray(toInt(properties.n)) AS n FROM events');
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json.results[0][0], [...labels].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      assert.deepEqual(r.json.results[0][1], labels.map((_, i) => i));
      assert.deepEqual(r.json.types, [['l', 'Array(String)'], ['n', 'Array(Int64)']]);
    });

    test('an array per row, and its elements read back', async () => {
      const r = await run('rows', "SELECT toInt(properties.n) AS n, [properties.label, 'x'] AS a, a[1] = properties.label AS same FROM events ORDER BY n");
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json.results.map((row) => row[1][0]), labels);
      assert.ok(r.json.results.every((row) => row[1][1] === 'x' && row[2] === 1));
    });

    test("a property's JSON array: properties.tags.1 (ClickHouse 19.3+)", async () => {
      const r = await run('tags', 'SELECT toInt(properties.n) AS n, properties.tags.1 AS t1, properties.tags.2 AS t2, properties.tags.3 AS t3, properties.tags.4 AS t4 FROM events ORDER BY n');
      if (pair.store === 'clickhouse') {
        assert.equal(r.status, 400);
        assert.match(r.json.detail, /needs ClickHouse 19\.3/);
        return;
      }
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json.results, labels.map((l, i) => [i, l, String(i), null, null]));
    });

    test('what this store cannot run is refused with the reason', async () => {
      const c = await s.call('POST', E, { name: 'refused', query: { kind: 'HogQLQuery', query: pair.store === 'clickhouse' ? 'SELECT range(1, 3)' : 'SELECT arrayMap((x, y) -> x + y, [1], [2])' } });
      assert.equal(c.status, 201);
      const r = await s.call('POST', `${E}refused/run`, {});
      assert.equal(r.status, 400);
      assert.match(r.json.detail, pair.store === 'clickhouse' ? /needs ClickHouse 21\+/ : /not supported on the SQLite store/);
    });
  });
}
