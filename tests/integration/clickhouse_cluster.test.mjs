// clickhouse_cluster.test.mjs - the loopback cluster of lib/ch_cluster.mjs
// (one ZooKeeper, 2 shards x 2 replicas of ClickHouse 18.16) and what the
// cluster event store will rest on: ON CLUSTER DDL reaching every node,
// ReplicatedReplacingMergeTree under a {shard}/{replica} path, a
// Distributed table sharded by sipHash64 of a key, a synchronous insert
// through it landing once, spread over the shards and copied to each
// shard's replicas; a replica killed with kill -9 while rows are written
// loses nothing and the other replica answers meanwhile.
// (The services in cluster mode, CLICKHOUSE_CLUSTER, are not here yet.)
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from './lib/ch_cluster.mjs';

const rowsOf = (from, n) => Array.from({ length: n }, (_, i) => ({ k: `k${from + i}`, v: from + i }));

describe('ClickHouse cluster on loopback: 2 shards x 2 replicas, one ZooKeeper', () => {
  let c;
  const q = (node, sql, opts) => node.query(sql, opts);
  const one = async (node, sql) => Number((await q(node, sql)).trim());
  const syncAll = async (table) => {
    for (const n of c.nodes) await q(n, `SYSTEM SYNC REPLICA ${table}`);
  };

  before(async () => {
    c = await startCluster();
  });
  after(async () => {
    await c?.stop();
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
});
