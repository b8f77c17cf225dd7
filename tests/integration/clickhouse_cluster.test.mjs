// clickhouse_cluster.test.mjs - the loopback cluster of lib/ch_cluster.mjs
// (one ZooKeeper, 2 shards x 2 replicas of ClickHouse 18.16) and what the
// cluster event store will rest on: ON CLUSTER DDL reaching every node,
// ReplicatedReplacingMergeTree under a {shard}/{replica} path, a
// Distributed table sharded by sipHash64 of a key, a synchronous insert
// through it landing once, spread over the shards and copied to each
// shard's replicas; a replica killed with kill -9 while rows are written
// loses nothing and the other replica answers meanwhile.
// Then the event store in cluster mode (CLICKHOUSE_CLUSTER): two apis on
// different nodes starting at once migrate the cluster once (replicated
// tables ON CLUSTER on every node, events Distributed), and events written
// through the Distributed table are counted the same through either api.
// Last, the whole path: events acknowledged by ingest, written by the
// writer in cluster mode through the Distributed table while a replica is
// killed with kill -9, each counted once on every node.
// The differential corpus, materialized endpoints and retention on the
// cluster: clickhouse_cluster_corpus, _materialized and _retention.test.mjs.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster } from './lib/ch_cluster.mjs';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { startPair } from './lib/suite.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin', 'api');

const rowsOf = (from, n) => Array.from({ length: n }, (_, i) => ({ k: `k${from + i}`, v: from + i }));

describe('ClickHouse cluster on loopback: 2 shards x 2 replicas, one ZooKeeper', () => {
  let c, redis, tmp, boot;
  const apis = [];
  const q = (node, sql, opts) => node.query(sql, opts);
  const one = async (node, sql) => Number((await q(node, sql)).trim());
  const syncAll = async (table) => {
    for (const n of c.nodes) await q(n, `SYSTEM SYNC REPLICA ${table}`);
  };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ch-cluster-'));
    [c, redis] = await Promise.all([startCluster(), startRedis()]);
  });
  after(async () => {
    for (const a of apis) await a.stop();
    await redis?.stop();
    await c?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('every node sees the cluster with its own macros', async () => {
    assert.equal(c.nodes.length, 4);
    for (const n of c.nodes) {
      const macros = Object.fromEntries((await n.rows('SELECT macro, substitution FROM system.macros')).map((r) => [r.macro, r.substitution]));
      assert.deepEqual(macros, { replica: n.replica, shard: n.shard });
      assert.equal(await one(n, `SELECT count() FROM system.clusters WHERE cluster = '${c.name}'`), 4);
    }
  });

  test('ON CLUSTER DDL, a Distributed insert counted once, spread over shards, copied to replicas', async () => {
    const n0 = c.nodes[0];
    await q(n0, `CREATE TABLE IF NOT EXISTS kv_local ON CLUSTER ${c.name} (k String, v UInt32) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/default.kv_local', '{replica}') ORDER BY k`);
    await q(n0, `CREATE TABLE IF NOT EXISTS kv ON CLUSTER ${c.name} AS kv_local ENGINE = Distributed(${c.name}, default, kv_local, sipHash64(k))`);
    for (const n of c.nodes) assert.deepEqual((await n.rows("SELECT name FROM system.tables WHERE name LIKE 'kv%' ORDER BY name")).map((r) => r.name), ['kv', 'kv_local']);
    const rows = rowsOf(0, 1000);
    await q(c.nodes[3], 'INSERT INTO kv FORMAT JSONEachRow', { body: rows, settings: { insert_distributed_sync: 1 } });
    await syncAll('kv_local');
    const locals = [];
    for (const n of c.nodes) locals.push(await one(n, 'SELECT count() FROM kv_local'));
    // replicas of a shard agree; the two shards split the rows between them
    assert.equal(locals[0], locals[1]);
    assert.equal(locals[2], locals[3]);
    assert.equal(locals[0] + locals[2], rows.length);
    assert.ok(locals[0] > 0 && locals[2] > 0, `both shards hold rows: ${locals}`);
    for (const n of c.nodes) {
      assert.equal(await one(n, 'SELECT count() FROM kv'), rows.length);
      assert.equal(await one(n, 'SELECT uniqExact(k) FROM kv'), rows.length);
      assert.equal(await one(n, 'SELECT sum(v) FROM kv'), rows.reduce((a, r) => a + r.v, 0));
    }
  });

  test('a replica killed with kill -9 during writes loses nothing; its peer answers meanwhile', async () => {
    const victim = c.nodes[1]; // shard 01's second replica
    const writer = c.nodes[2];
    const before = await one(writer, 'SELECT count() FROM kv');
    const batches = [];
    const outage = victim.down(1500);
    for (let b = 0; b < 5; b++) {
      const rows = rowsOf(10000 + b * 100, 100);
      await q(writer, 'INSERT INTO kv FORMAT JSONEachRow', { body: rows, settings: { insert_distributed_sync: 1 } });
      batches.push(...rows);
      // reads during the outage: the Distributed table picks a live replica
      assert.ok(await one(c.nodes[0], 'SELECT count() FROM kv') >= before);
    }
    await outage;
    await syncAll('kv_local');
    const total = before + batches.length;
    for (const n of c.nodes) assert.equal(await one(n, 'SELECT count() FROM kv'), total);
    assert.equal(await one(victim, 'SELECT count() FROM kv_local'), await one(c.nodes[0], 'SELECT count() FROM kv_local'));
  });

  test('cluster mode: two apis on two nodes migrate once; Distributed events read alike through both', async () => {
    const envFor = (node) => ({
      API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, LOG_LEVEL: 'warn',
      CLICKHOUSE_URL: `${node.url}/?database=default`, CLICKHOUSE_CLUSTER: c.name, MATERIALIZE_CHECK: '1h',
    });
    boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...envFor(c.nodes[0]) } })).stdout);
    const two = await Promise.all([c.nodes[0], c.nodes[3]].map((n) => startServer(API, envFor(n), { ready: true })));
    apis.push(...two);
    const h = { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' };
    const count = async (api, name) => {
      const E = `http://127.0.0.1:${api.port}/api/projects/${boot.project_id}/endpoints/`;
      let r = await fetch(E, { method: 'POST', headers: h, body: JSON.stringify({ name, query: { kind: 'HogQLQuery', query: "SELECT count() AS n, uniqExact(distinct_id) AS d FROM events WHERE event = 'clustered'" } }) });
      assert.equal(r.status, 201, await r.text());
      r = await fetch(`${E}${name}/run`, { method: 'POST', headers: h, body: JSON.stringify({ refresh: 'force' }) });
      const j = await r.json();
      assert.equal(r.status, 200, JSON.stringify(j));
      return j.results[0].map(Number);
    };
    // the first run waits for the migrations, which both apis raced to apply
    assert.deepEqual(await Promise.all(two.map((a, i) => count(a, `empty-${i}`))), [[0, 0], [0, 0]]);
    for (const n of c.nodes) {
      const engines = Object.fromEntries((await n.rows("SELECT name, engine FROM system.tables WHERE database = 'default' AND name IN ('events', 'events_local', 'persons', 'person_distinct_ids', 'groups', 'schema_migrations')")).map((r) => [r.name, r.engine]));
      assert.deepEqual(engines, {
        events: 'Distributed', events_local: 'ReplicatedReplacingMergeTree', persons: 'ReplicatedReplacingMergeTree',
        person_distinct_ids: 'ReplicatedReplacingMergeTree', groups: 'ReplicatedReplacingMergeTree', schema_migrations: 'ReplicatedReplacingMergeTree',
      }, `${n.replica}`);
    }
    const events = Array.from({ length: 400 }, (_, i) => ({
      uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, project_id: boot.project_id, event: 'clustered',
      distinct_id: `user-${i % 37}`, person_id: '00000000-0000-4000-8000-000000000999', properties: '{}', person_properties: '{}',
      timestamp: '2026-01-02 03:04:05', timestamp_ms: 1767323045000, created_at: '2026-01-02 03:04:05', session_id: '',
    }));
    await q(c.nodes[2], 'INSERT INTO events FORMAT JSONEachRow', { body: events, settings: { insert_distributed_sync: 1 } });
    await syncAll('events_local');
    // one distinct id's events sit on one shard (sipHash64(distinct_id))
    for (const n of [c.nodes[0], c.nodes[2]]) {
      const ids = (await n.rows("SELECT distinct_id FROM events_local WHERE event = 'clustered' GROUP BY distinct_id")).map((r) => r.distinct_id);
      const other = n === c.nodes[0] ? c.nodes[2] : c.nodes[0];
      const there = (await other.rows("SELECT distinct_id FROM events_local WHERE event = 'clustered' GROUP BY distinct_id")).map((r) => r.distinct_id);
      assert.ok(ids.length > 0);
      assert.deepEqual(ids.filter((d) => there.includes(d)), []);
    }
    const want = [events.length, new Set(events.map((e) => e.distinct_id)).size];
    assert.deepEqual(await Promise.all(two.map((a, i) => count(a, `full-${i}`))), [want, want]);
  });

  test('cluster mode: every event acknowledged by ingest counted once, a replica killed with kill -9 meanwhile', async () => {
    const env = { CLICKHOUSE_URL: `${c.nodes[0].url}/?database=default`, CLICKHOUSE_CLUSTER: c.name };
    const s = await startPair({ queue: 'redis', store: 'clickhouse', persons: 'sqlite' }, { store: { env, stop: async () => {} } });
    try {
      const victim = c.nodes[3]; // shard 02's second replica (the writer's URL is node 0)
      const sent = [];
      const send = async (b) => {
        const batch = Array.from({ length: 50 }, (_, i) => ({ event: 'through-ingest', distinct_id: `p-${(b * 50 + i) % 23}`, properties: { b, i } }));
        const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch }) });
        assert.equal(r.status, 200, await r.text());
        sent.push(...batch);
      };
      for (let b = 0; b < 4; b++) await send(b);
      const outage = victim.down(2000);
      for (let b = 4; b < 8; b++) await send(b);
      await outage;
      const where = "event = 'through-ingest'";
      const deadline = Date.now() + 60000;
      for (;;) {
        await syncAll('events_local');
        if (await one(c.nodes[1], `SELECT count() FROM events WHERE ${where}`) >= sent.length || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      for (const n of c.nodes) {
        assert.equal(await one(n, `SELECT count() FROM events WHERE ${where}`), sent.length, n.replica);
        assert.equal(await one(n, `SELECT uniqExact(uuid) FROM events WHERE ${where}`), sent.length, n.replica);
      }
      assert.equal(await one(victim, `SELECT count() FROM events_local WHERE ${where}`), await one(c.nodes[2], `SELECT count() FROM events_local WHERE ${where}`));
    } finally {
      await s.stop();
    }
  });
});
