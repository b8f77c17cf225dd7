// clickhouse_cluster_retention.test.mjs - deleting on the loopback cluster
// of lib/ch_cluster.mjs (one ZooKeeper, 2 shards x 2 replicas of ClickHouse
// 18.16) in cluster mode (CLICKHOUSE_CLUSTER): the writer's retention
// prune (EVENT_RETENTION_DAYS, every 300 ms) removes the old events from
// every shard's local table on both replicas and keeps the recent ones
// (its mutation goes to events_local ON CLUSTER: the Distributed events
// takes none); a person's erasure with delete_events (DELETE
// /api/projects/{id}/persons/{uuid}/?delete_events=true) removes their
// events from every node and leaves only the tombstones of their person
// and distinct-id rows, on every node; another person's rows stay. The
// same requests as retention.test.mjs and persons_delete.test.mjs on one
// server.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startCluster } from './lib/ch_cluster.mjs';
import { startPair } from './lib/suite.mjs';
import { sleep, within } from './lib/rawhttp.mjs';

const DAY = 86400000;

describe('ClickHouse cluster mode: retention and person erasure on every shard and replica', () => {
  let c, s;
  const one = async (node, sql) => Number((await node.query(sql)).trim());
  const syncAll = async (table) => {
    for (const n of c.nodes) await n.query(`SYSTEM SYNC REPLICA ${table}`);
  };
  // each node's own rows of events_local matching where, after the
  // replicas caught up
  const localCounts = async (where) => {
    await syncAll('events_local');
    const out = [];
    for (const n of c.nodes) out.push(await one(n, `SELECT count() FROM events_local WHERE ${where}`));
    return out;
  };
  const capture = async (batch) => {
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch }) });
    assert.equal(r.status, 200, await r.text());
  };

  before(async () => {
    c = await startCluster();
    const env = { CLICKHOUSE_URL: `${c.nodes[0].url}/?database=default`, CLICKHOUSE_CLUSTER: c.name };
    s = await startPair({ queue: 'redis', store: 'clickhouse', persons: 'sqlite' }, {
      store: { env, stop: async () => {} },
      writer: { EVENT_RETENTION_DAYS: '30', EVENT_RETENTION_INTERVAL: '300ms', PERSON_ERASURE_POLL: '100ms' },
      apiEnv: { MATERIALIZE_CHECK: '1h' },
    });
    // the services migrate the cluster in the background
    await within(60000, 'the tables on every node', async () => {
      for (const n of c.nodes) if ((await one(n, "SELECT count() FROM system.tables WHERE database = 'default' AND name IN ('events', 'events_local', 'persons', 'person_distinct_ids')")) !== 4) return false;
      return true;
    });
  });

  after(async () => {
    await s?.stop();
    await c?.stop();
  });

  test('old events leave every shard and replica; recent ones stay', async () => {
    const now = Date.now();
    const at = (daysAgo) => new Date(now - daysAgo * DAY).toISOString();
    // many distinct ids, so both shards hold old and young events
    const old = Array.from({ length: 40 }, (_, i) => ({ event: 'old', distinct_id: `r${i}`, uuid: crypto.randomUUID(), timestamp: at(31 + (i % 5) * 40), properties: {} }));
    const young = Array.from({ length: 40 }, (_, i) => ({ event: 'young', distinct_id: `r${i}`, uuid: crypto.randomUUID(), timestamp: at(i % 29), properties: {} }));
    await capture([...old, ...young]);
    // the writer may prune the old ones as soon as they land, so only the
    // young ones are waited for; the old ones are seen pruned below (the
    // metric counts what each cycle's count saw: rows landing between a
    // count and its mutation go uncounted, as on one server)
    await within(30000, 'the young events stored', async () => (await one(c.nodes[1], "SELECT count() FROM events WHERE event = 'young'")) === young.length);
    await within(90000, 'the old events pruned on every node', async () => (await localCounts("event = 'old'")).every((n) => n === 0) && (await s.metric('writer_events_pruned_total')) > 0);
    // the young events: on both shards, each shard's replicas alike, all there
    const y = await localCounts("event = 'young'");
    assert.equal(y[0], y[1], `shard 01's replicas agree: ${y}`);
    assert.equal(y[2], y[3], `shard 02's replicas agree: ${y}`);
    assert.ok(y[0] > 0 && y[2] > 0, `both shards hold young events: ${y}`);
    assert.equal(y[0] + y[2], young.length);
    // the mutation went to the local tables, one per shard, and finished
    for (const n of c.nodes) {
      const muts = await n.rows("SELECT table, is_done FROM system.mutations WHERE database = 'default' AND table IN ('events', 'events_local')");
      assert.ok(muts.length > 0 && muts.every((m) => m.table === 'events_local'), `${n.replica}: ${JSON.stringify(muts)}`);
    }
    await sleep(1000); // more prune cycles leave the young ones alone
    for (const n of c.nodes) assert.equal(await one(n, "SELECT count() FROM events WHERE event = 'young'"), young.length, n.replica);
  });

  test('a person erased with delete_events leaves every node; another person stays', async () => {
    const A = s.boot.project_id;
    const personOf = async (d) => (await s.get(`/api/projects/${A}/persons/?distinct_id=${d}`)).json.results ?? [];
    const ids = ['erase-c', 'keep-c'];
    const batch = [];
    for (const d of ids) for (let i = 0; i < 6; i++) batch.push({ event: `visit-${i}`, distinct_id: d, uuid: crypto.randomUUID(), timestamp: new Date().toISOString(), properties: i === 0 ? { $set: { email: `${d}@example.com` } } : {} });
    // an anonymous id on (likely) the other shard, merged into erase-c
    batch.push({ event: 'anonymous', distinct_id: 'erase-c-anon', uuid: crypto.randomUUID(), timestamp: new Date().toISOString(), properties: {} });
    await capture(batch);
    await capture([{ event: '$identify', distinct_id: 'erase-c', uuid: crypto.randomUUID(), timestamp: new Date().toISOString(), properties: { $anon_distinct_id: 'erase-c-anon' } }]);
    await within(30000, 'the persons and events written', async () => (await personOf('erase-c')).length === 1 && (await personOf('keep-c')).length === 1 &&
      (await one(c.nodes[0], "SELECT count() FROM events WHERE distinct_id IN ('erase-c', 'erase-c-anon', 'keep-c')")) === 14);
    const person = (await personOf('erase-c'))[0];
    assert.deepEqual([...person.distinct_ids].sort(), ['erase-c', 'erase-c-anon']);
    const mine = "distinct_id IN ('erase-c', 'erase-c-anon')";
    await syncAll('persons');
    await syncAll('person_distinct_ids');
    for (const n of c.nodes) assert.ok(await one(n, `SELECT count() FROM persons WHERE toString(id) = '${person.id}' AND is_deleted = 0`) >= 1, n.replica);

    const r = await s.call('DELETE', `/api/projects/${A}/persons/${person.id}/?delete_events=true`);
    assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(r.json.status, 'pending');
    assert.equal(r.json.events_deleted, 8, 'its own and the anonymous id\'s events');
    assert.equal((await personOf('erase-c')).length, 0, 'hidden by its tombstone at once');

    await within(90000, 'the events gone from every node', async () => (await localCounts(mine)).every((n) => n === 0));
    await within(90000, 'only the tombstones left on every node', async () => {
      await syncAll('persons');
      await syncAll('person_distinct_ids');
      for (const n of c.nodes) {
        const p = await n.rows(`SELECT is_deleted AS d, properties AS p FROM persons WHERE toString(id) = '${person.id}'`);
        const d = await n.rows(`SELECT is_deleted AS d FROM person_distinct_ids WHERE toString(person_id) = '${person.id}'`);
        if (!(p.length === 1 && Number(p[0].d) === 1 && p[0].p === '{}' && d.length === 2 && d.every((x) => Number(x.d) === 1))) return false;
      }
      return true;
    });
    // the other person: its events and rows on every node
    for (const n of c.nodes) {
      assert.equal(await one(n, "SELECT count() FROM events WHERE distinct_id = 'keep-c'"), 6, n.replica);
      assert.equal(await one(n, "SELECT count() FROM person_distinct_ids WHERE distinct_id = 'keep-c' AND is_deleted = 0"), 1, n.replica);
    }
    assert.equal((await personOf('keep-c')).length, 1);
  });
});
