// bench_cluster.mjs [N] - the writer's ways into a ClickHouse cluster,
// measured on 2 shards x 2 replicas of ClickHouse 18.16 and one ZooKeeper on
// loopback (tests/integration/lib/ch_cluster.mjs), beside the same rows into
// one server's events table in the same run:
//   distributed sync   INSERT INTO events (Distributed), insert_distributed_sync=1
//                      (what the writer does: acknowledged once every shard holds its rows)
//   distributed async  the same with insert_distributed_sync=0 (acknowledged once the
//                      receiving node has queued the rows on its disk)
//   per shard          INSERT INTO events_local on one replica of each shard, rows split
//                      in the client by sipHash64(distinct_id) % shards, the Distributed
//                      table's own sharding key; the shards' inserts run concurrently
// N rows (BENCH_CLUSTER_EVENTS, default 100,000; the events table's columns,
// 1,000 distinct ids, ~20 properties each) in batches of WRITER_BATCH (1,000),
// one batch in flight at a time, as the writer sends them.
// Then 1 shard x 2 replicas and 2 shards x 1 replica, Distributed sync
// only, beside one server again: replication's cost and sharding's apart
// (BENCH_CLUSTER_SHAPES, default 2x2,1x2,2x1; BENCH_CLUSTER_ROUNDS, 2).
// Per way: rows/s until the last insert is acknowledged; how many rows were
// on a shard (on at least one of its replicas) at that moment; seconds until
// every replica holds its shard's rows; the servers' CPU (user + system, all ClickHouse nodes and ZooKeeper)
// from the first insert to that moment, per 1,000 rows.
// The shard of a distinct id is computed here by a JS SipHash-2-4 and checked
// against ClickHouse's sipHash64 for every id, and the rows the per-shard way
// put on each shard are checked to be the ones the Distributed table put there.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startClickHouse } from '../../tests/integration/lib/clickhouse.mjs';
import { startCluster } from '../../tests/integration/lib/ch_cluster.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const N = Number(process.argv[2] || process.env.BENCH_CLUSTER_EVENTS || 100000);
const BATCH = Number(process.env.WRITER_BATCH || 1000);
const USERS = 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- SipHash-2-4, key 0: ClickHouse's sipHash64 of a String ---------------
const M64 = (1n << 64n) - 1n;
const rotl = (x, b) => ((x << b) | (x >> (64n - b))) & M64;
export function sipHash64(str) {
  const buf = Buffer.from(str, 'utf8');
  let v0 = 0x736f6d6570736575n, v1 = 0x646f72616e646f6dn, v2 = 0x6c7967656e657261n, v3 = 0x7465646279746573n;
  const round = () => {
    v0 = (v0 + v1) & M64; v1 = rotl(v1, 13n); v1 ^= v0; v0 = rotl(v0, 32n);
    v2 = (v2 + v3) & M64; v3 = rotl(v3, 16n); v3 ^= v2;
    v0 = (v0 + v3) & M64; v3 = rotl(v3, 21n); v3 ^= v0;
    v2 = (v2 + v1) & M64; v1 = rotl(v1, 17n); v1 ^= v2; v2 = rotl(v2, 32n);
  };
  const whole = buf.length - (buf.length % 8);
  for (let i = 0; i < whole; i += 8) {
    const m = buf.readBigUInt64LE(i);
    v3 ^= m; round(); round(); v0 ^= m;
  }
  let b = BigInt(buf.length & 0xff) << 56n;
  for (let i = whole; i < buf.length; i++) b |= BigInt(buf[i]) << BigInt(8 * (i - whole));
  v3 ^= b; round(); round(); v0 ^= b;
  v2 ^= 0xffn;
  round(); round(); round(); round();
  return (v0 ^ v1 ^ v2 ^ v3) & M64;
}

// --- rows --------------------------------------------------------------------
function row(i, t0) {
  const user = `user-${i % USERS}`;
  const event = i % 20 === 0 ? '$identify' : i % 3 ? '$pageview' : 'button clicked';
  const ms = t0 + i;
  const props = {
    $lib: 'web', $lib_version: '1.449.2', $browser: 'Firefox', $browser_version: 133, $os: 'Linux',
    $device_type: 'Desktop', $current_url: `https://shop.example.com/p/${i % 97}`, $pathname: `/p/${i % 97}`,
    $host: 'shop.example.com', $referrer: '$direct', $referring_domain: '$direct', $screen_height: 1080,
    $screen_width: 1920, $viewport_height: 960, $viewport_width: 1800, $session_id: randomUUID(),
    $window_id: randomUUID(), price: i % 100, sku: `sku-${i % 500}`,
  };
  const keys = Object.keys(props);
  const pp = { email: `${user}@example.com`, plan: 'free' };
  const ts = new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  return {
    uuid: randomUUID(), project_id: 1, event, distinct_id: user, person_id: randomUUID(),
    properties: JSON.stringify(props), person_properties: JSON.stringify(pp),
    properties_keys: keys, properties_values: keys.map((k) => String(props[k])),
    person_properties_keys: Object.keys(pp), person_properties_values: Object.values(pp),
    timestamp: ts, timestamp_ms: ms, created_at: ts, session_id: props.$session_id,
  };
}

// --- DDL: migration 1's events statements from the proto files --------------
function statements(file, first) {
  const text = fs.readFileSync(path.join(ROOT, 'proto/event_store', file), 'utf8')
    .split('\n').filter((l) => !l.startsWith('--')).join('\n');
  return text.split(';').map((s) => s.trim()).filter(Boolean).slice(0, first);
}
const clusterDdl = (cluster, db) => statements('clickhouse_cluster.sql', 2)
  .map((s) => s.replaceAll('$CLUSTER', cluster).replaceAll('$DATABASE', db));

// --- CPU ---------------------------------------------------------------------
const TICK = 100; // USER_HZ on Linux
function cpuSecs(pids) {
  let t = 0;
  for (const pid of pids) {
    try {
      const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      t += Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
    } catch { /* gone */ }
  }
  return t / TICK;
}

const one = async (node, sql) => Number((await node.query(sql)).trim());

// Sends the batches one after another (per shard: each batch's shard parts
// together), then waits until `stored()` reaches want. -> figures
async function measure(send, batches, stored, want, pids) {
  const c0 = cpuSecs(pids);
  const t0 = performance.now();
  for (const b of batches) await send(b);
  const acked = performance.now();
  const atAck = await stored.shards();
  for (;;) {
    if ((await stored.replicas()) >= want) break;
    if (performance.now() - acked > 300e3) throw new Error('replicas did not catch up in 300 s');
    await sleep(50);
  }
  const done = performance.now();
  const cpu = cpuSecs(pids) - c0;
  return {
    rate: N / ((acked - t0) / 1000), ack_s: (acked - t0) / 1000, on_shards_at_ack: atAck,
    replicated_s: (done - t0) / 1000, cpu_s: cpu, cpu_ms_per_1k: (cpu * 1e6) / N,
  };
}

const t0 = Date.now() - 86400e3;
const rows = Array.from({ length: N }, (_, i) => row(i, t0));
const batches = [];
for (let i = 0; i < N; i += BATCH) batches.push(rows.slice(i, i + BATCH));
const bodies = batches.map((b) => b.map((r) => JSON.stringify(r)).join('\n') + '\n');

// One cluster shape: its ways (a subset of WAYS' keys, 'base' first) over
// ROUNDS rounds in rotated order; prints a table.
async function benchShape(single, shardCount, replicaCount, order, ROUNDS) {
  const c = await startCluster({ shards: shardCount, replicas: replicaCount });
  try {
    const name = c.name;
    const nodes = c.nodes;
    const pids = [...nodes.map((n) => n.pid), c.zk.pid];

    // The cluster's shards as the Distributed table numbers them (shard_num,
    // in remote_servers' order): row goes to shard (hash % shards) in that order.
    const byPort = new Map(nodes.map((n) => [n.tcpPort, n]));
    const cl = await nodes[0].rows(`SELECT shard_num, replica_num, port, shard_weight FROM system.clusters WHERE cluster = '${name}' ORDER BY shard_num, replica_num`);
    const shardNodes = []; // shard index -> the first replica's handle
    for (const r of cl) {
      if (Number(r.shard_weight) !== 1) throw new Error('bench assumes weight 1 shards');
      if (Number(r.replica_num) === 1) shardNodes[Number(r.shard_num) - 1] = byPort.get(Number(r.port));
    }
    const S = shardNodes.length;

    // The client's shard of each distinct id, checked against ClickHouse's.
    const ids = Array.from({ length: USERS }, (_, i) => `user-${i}`);
    const theirs = await nodes[0].rows(`SELECT d, toString(sipHash64(d)) AS h FROM (SELECT arrayJoin(['${ids.join("','")}']) AS d)`);
    let mismatch = 0;
    for (const { d, h } of theirs) if (sipHash64(d).toString() !== h) mismatch++;
    if (mismatch || theirs.length !== USERS) throw new Error(`JS sipHash64 differs from ClickHouse's on ${mismatch} of ${USERS} ids`);
    const shardOf = new Map(ids.map((d) => [d, Number(sipHash64(d) % BigInt(S))]));
    const shardBodies = batches.map((b) => {
      const parts = Array.from({ length: S }, () => []);
      for (const r of b) parts[shardOf.get(r.distinct_id)].push(JSON.stringify(r));
      return parts.map((p) => (p.length ? p.join('\n') + '\n' : null));
    });

    // stored: the rows on at least one replica (a Distributed insert picks a
    // replica per insert, so no one replica of a shard has them all yet) and
    // the rows on all replicas together (want: every row on each of its
    // shard's replicas).
    const count = (n, table) => one(n, `SELECT count() FROM ${table}`);
    const everyNode = nodes.map((n) => `127.0.0.1:${n.tcpPort}`).join(',');
    const storedIn = (db) => ({
      shards: () => one(nodes[0], `SELECT uniqExact(uuid) FROM remote('${everyNode}', ${db}, events_local)`),
      async replicas() {
        let sum = 0;
        for (const n of nodes) sum += await count(n, `${db}.events_local`);
        return sum;
      },
    });
    const replicasPerShard = nodes.length / S;
    const want = N * replicasPerShard;
    const post = (node, sql, settings = {}) => (body) => node.query(sql, { body, settings });

    // Each way into a database of its own (fresh tables and ZooKeeper paths),
    // dropped once measured so its merges do not weigh on the next way.
    const WAYS = {
      base: { label: 'one server: events (baseline)' },
      dsync: { label: 'Distributed, insert_distributed_sync=1' },
      dasync: { label: 'Distributed, insert_distributed_sync=0' },
      shard: { label: `per shard: events_local x ${S}, sipHash64 % ${S}` },
    };
    async function runWay(way, db) {
      if (way === 'base') {
        await single.query(`CREATE DATABASE ${db}`);
        await single.query(statements('clickhouse.sql', 1)[0].replace('EXISTS events', `EXISTS ${db}.events`));
        const stored = { shards: () => count(single, `${db}.events`), replicas: () => count(single, `${db}.events`) };
        return measure(post(single, `INSERT INTO ${db}.events FORMAT JSONEachRow`), bodies, stored, N, [single.pid]);
      }
      await nodes[0].query(`CREATE DATABASE ${db} ON CLUSTER ${name}`);
      for (const s of clusterDdl(name, db)) await nodes[0].query(s);
      if (way === 'shard') {
        const send = (parts) => Promise.all(parts.map((p, s) => (p ? shardNodes[s].query(`INSERT INTO ${db}.events_local FORMAT JSONEachRow`, { body: p }) : null)));
        return measure(send, shardBodies, storedIn(db), want, pids);
      }
      const sync = way === 'dsync' ? 1 : 0;
      return measure(post(nodes[0], `INSERT INTO ${db}.events FORMAT JSONEachRow`, { insert_distributed_sync: sync }), bodies, storedIn(db), want, pids);
    }
    const drop = (way, db) => (way === 'base' ? single.query(`DROP DATABASE ${db}`) : nodes[0].query(`DROP DATABASE ${db} ON CLUSTER ${name}`));

    // The per-shard split put every distinct id on the shard the Distributed
    // table chose for it, as many rows of each.
    async function sameShards(dbDistributed, dbShard) {
      for (let s = 0; s < S; s++) {
        const q = (db) => shardNodes[s].query(`SELECT distinct_id, count() FROM ${db}.events_local GROUP BY distinct_id ORDER BY distinct_id FORMAT TabSeparated`);
        if ((await q(dbDistributed)) !== (await q(dbShard))) throw new Error(`shard ${s + 1}: per-shard rows differ from the Distributed table's`);
      }
    }

    // Rounds in rotated order: a way measured first or last in one round is
    // in the middle in another (the machine's other load and ZooKeeper's
    // state drift during a run).
    const results = [];
    for (let r = 0; r < ROUNDS; r++) {
      const seq = order.slice(r % order.length).concat(order.slice(0, r % order.length));
      const res = {};
      for (const way of seq) {
        const db = `bench_${way}_${shardCount}x${replicaCount}_${r}`;
        res[way] = await runWay(way, db);
        const first = (w) => `bench_${w}_${shardCount}x${replicaCount}_0`;
        if (r === 0 && way === 'shard' && res.dsync) await sameShards(first('dsync'), db);
        if (r === 0 && way === 'dsync' && res.shard) await sameShards(db, first('shard'));
        const keep = r === 0 && ((way === 'dsync' && !res.shard) || (way === 'shard' && !res.dsync));
        if (!keep) await drop(way, db);
        if (r === 0 && way === 'shard' && res.dsync) await drop('dsync', first('dsync'));
        if (r === 0 && way === 'dsync' && res.shard) await drop('shard', first('shard'));
      }
      results.push(res);
    }

    console.log(`-- cluster ${S} shard(s) x ${replicasPerShard} replica(s) + ZooKeeper on this machine: ${N} rows in batches of ${BATCH}, one in flight; ${ROUNDS} rounds, rotated order`);
    console.log(`   JS sipHash64 = ClickHouse's on all ${USERS} ids${order.includes('shard') ? "; per-shard rows on each shard = the Distributed table's" : ''}`);
    const fmt = (a, b, c2, d, e, f, g) => `${a.padEnd(46)} ${b.padStart(9)} ${c2.padStart(6)} ${d.padStart(11)} ${e.padStart(13)} ${f.padStart(9)} ${g.padStart(10)}`;
    console.log(fmt('target', 'rows/s', 'ratio', 'on shards', 'replicated s', 'CPU s', 'CPU ms'));
    console.log(fmt('', '(acked)', '', 'at last ack', '(all copies)', '(servers)', '/1k rows'));
    results.forEach((res, r) => {
      for (const way of order) {
        const x = res[way];
        console.log(fmt(`${WAYS[way].label} #${r + 1}`, x.rate.toFixed(0), (x.rate / res.base.rate).toFixed(2), String(x.on_shards_at_ack),
          x.replicated_s.toFixed(2), x.cpu_s.toFixed(2), x.cpu_ms_per_1k.toFixed(1)));
      }
    });
  } finally {
    await c.stop();
  }
}

// 2 x 2 with every way; then, with the Distributed insert only, 1 shard x 2
// replicas (replication alone) and 2 shards x 1 replica (sharding alone):
// what a shard and what a replica cost on this machine.
// BENCH_CLUSTER_SHAPES: e.g. "2x2" for the first part alone.
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS || 2);
const shapes = (process.env.BENCH_CLUSTER_SHAPES || '2x2,1x2,2x1').split(',').map((x) => x.split('x').map(Number));
const single = await startClickHouse();
try {
  for (const [sh, rep] of shapes) {
    const order = sh === 2 && rep === 2 ? ['base', 'dsync', 'shard', 'dasync'] : ['base', 'dsync'];
    await benchShape(single, sh, rep, order, ROUNDS);
  }
} finally {
  await single.stop();
}
