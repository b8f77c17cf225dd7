// clickhouse_cluster_materialized.test.mjs - materialized endpoints on a
// ClickHouse cluster (issue 30, section 1): 2 shards x 2 replicas and one
// ZooKeeper on loopback (lib/ch_cluster.mjs), the suite's api, ingest and
// writer in cluster mode on node 0 and a second api on node 3 (the other
// shard). Shown here:
//   - a table materialized through one api is a ReplicatedMergeTree on
//     every node holding every row, and the endpoint answers the same
//     through either api as the query itself does;
//   - a new version replaces it on every node and the old one is dropped
//     from every node;
//   - with a replica killed (kill -9) the endpoint still answers through
//     both apis;
//   - materialization turned off drops the table from every node.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startCluster } from './lib/ch_cluster.mjs';
import { BUILD, startServer } from './lib/proc.mjs';
import { within } from './lib/rawhttp.mjs';
import { startPair } from './lib/suite.mjs';

const API = path.join(BUILD, 'bin', 'api');

describe('materialized endpoints on a ClickHouse cluster (2 shards x 2 replicas)', () => {
  let c, s, apiB, E;
  const h = () => ({ Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json' });
  const call = async (api, method, p, body) => {
    const r = await fetch(`http://127.0.0.1:${api.port}${p}`, { method, headers: h(), body: body ? JSON.stringify(body) : undefined });
    return { status: r.status, json: await r.json() };
  };
  const run = async (api, name, body) => {
    const r = await call(api, 'POST', `${E}${name}/run`, body);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json;
  };
  // the api's materialized tables on a node, with their engines
  const matTables = async (n) => (await n.rows("SELECT name, engine FROM system.tables WHERE database = 'default' AND name LIKE 'mat\\\\_%' ORDER BY name"));
  const zkPaths = async (table) => Number((await c.nodes[0].query(`SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/tables/noshard' AND name = 'default.${table}'`)).trim());
  const capture = async (count, event, tag) => {
    const batch = Array.from({ length: count }, (_, i) => ({ event, distinct_id: `u-${i % 13}`, properties: { i, tag } }));
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch }) });
    assert.equal(r.status, 200, await r.text());
  };
  // (the events table exists once a process's migrations ran: false until then)
  const stored = async (n) => Number((await c.nodes[0].query(`SELECT count() FROM events WHERE project_id = ${s.boot.project_id}`).catch(() => '0')).trim()) >= n;

  before(async () => {
    c = await startCluster();
    const env = { CLICKHOUSE_URL: `${c.nodes[0].url}/?database=default`, CLICKHOUSE_CLUSTER: c.name };
    s = await startPair({ queue: 'redis', store: 'clickhouse', persons: 'sqlite' },
      { store: { env, stop: async () => {} }, apiEnv: { MATERIALIZE_CHECK: '200ms' } });
    apiB = await startServer(API, { ...s.apiEnv, CLICKHOUSE_URL: `${c.nodes[3].url}/?database=default` }, { ready: true });
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
    const V = `/api/projects/${s.boot.project_id}/insight_variables/`;
    const r = await call(s.api, 'POST', V, { name: 'event_name', type: 'String', default_value: null });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await capture(60, 'signup', 'a');
    await capture(90, 'purchase', 'a');
    await within(60000, 'events stored', () => stored(150));
  });
  after(async () => {
    await apiB?.stop();
    await s?.stop();
    await c?.stop();
  });

  test('built once, held whole by every node, answered alike through apis on two shards', async () => {
    const query = 'SELECT count() AS n, uniqExact(distinct_id) AS users FROM events WHERE event = {variables.event_name}';
    let r = await call(s.api, 'POST', E, { name: 'by-event', is_materialized: true, query: { kind: 'HogQLQuery', query } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await within(30000, 'the table built', async () => (await call(s.api, 'GET', `${E}by-event/materialization_status`)).json.status === 'Completed');
    const first = await matTables(c.nodes[0]);
    assert.equal(first.length, 1, JSON.stringify(first));
    assert.equal(await zkPaths(first[0].name), 1); // one table, every node its replica
    for (const n of c.nodes) {
      assert.deepEqual(await matTables(n), [{ name: first[0].name, engine: 'ReplicatedMergeTree' }], `node ${n.shard}-${n.replica}`);
      await n.query(`SYSTEM SYNC REPLICA ${first[0].name}`);
      // every value's row, on every node (not a shard's part)
      assert.equal(Number((await n.query(`SELECT count() FROM ${first[0].name}`)).trim()), 2, `node ${n.shard}-${n.replica}`);
    }
    for (const api of [s.api, apiB]) {
      for (const [event_name, want] of [['signup', [60, 13]], ['purchase', [90, 13]], ['none', [0, 0]]]) {
        const mat = await run(api, 'by-event', { variables: { event_name } });
        const direct = await run(api, 'by-event', { variables: { event_name }, refresh: 'direct' });
        // a value without events has no row in the table: the query answers its one row
        assert.equal(mat.endpoint_materialized, event_name === 'none' ? undefined : true, JSON.stringify(mat));
        assert.deepEqual(mat.results, direct.results, event_name);
        assert.deepEqual(mat.results[0].map(Number), want, event_name);
      }
    }
  });

  test('a new version replaces the table on every node; the old one is dropped from all', async () => {
    const old = (await matTables(c.nodes[0]))[0].name;
    await capture(30, 'signup', 'b');
    await within(60000, 'more events stored', () => stored(180));
    const query = 'SELECT count() AS n FROM events WHERE event = {variables.event_name}';
    const r = await call(apiB, 'PATCH', `${E}by-event/`, { query: { kind: 'HogQLQuery', query } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    await within(30000, 'the new table built and the old dropped on every node', async () => {
      for (const n of c.nodes) {
        const t = await matTables(n);
        if (t.length !== 1 || t[0].name === old) return false;
      }
      // each api reads the new version once its read cache (API_READ_CACHE, 1 s) lets go of
      // the old one, whose table is gone (a run of the old query meanwhile)
      for (const api of [s.api, apiB]) {
        const r = await run(api, 'by-event', { variables: { event_name: 'signup' } });
        if (r.endpoint_materialized !== true || r.endpoint_version !== 2) return false;
      }
      return true;
    });
    // the old table's ZooKeeper path went with its drop
    assert.equal(await zkPaths(old), 0);
    for (const api of [s.api, apiB]) {
      const mat = await run(api, 'by-event', { variables: { event_name: 'signup' } });
      assert.equal(mat.endpoint_materialized, true);
      assert.deepEqual(mat.results, [[90]]);
    }
  });

  test('a replica killed with kill -9: both apis still answer from the table', async () => {
    const victim = c.nodes[1]; // shard 01's second replica: neither api's node
    const outage = victim.down(2500);
    for (let i = 0; i < 3; i++) {
      for (const api of [s.api, apiB]) {
        const mat = await run(api, 'by-event', { variables: { event_name: 'purchase' } });
        assert.equal(mat.endpoint_materialized, true);
        assert.deepEqual(mat.results, [[90]]);
      }
    }
    await outage;
  });

  test('materialization turned off drops the table from every node', async () => {
    const r = await call(s.api, 'PATCH', `${E}by-event/`, { is_materialized: false });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    await within(30000, 'no materialized table on any node', async () => {
      for (const n of c.nodes) if ((await matTables(n)).length !== 0) return false;
      return true;
    });
    const inline = await run(apiB, 'by-event', { variables: { event_name: 'signup' } });
    assert.equal(inline.endpoint_materialized, undefined);
    assert.deepEqual(inline.results, [[90]]);
  });
});
