// clickhouse_cluster_corpus.test.mjs - the differential corpus
// (hogql/corpus*.mjs) on the ClickHouse cluster in cluster mode (2 shards x
// 2 replicas, lib/ch_cluster.mjs) and on one ClickHouse server, over the
// same dataset sent through each one's ingest: the same columns and rows
// for every query. Reads go through the Distributed events table, joined
// to the persons tables' local copies on every shard.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { startPair } from './lib/suite.mjs';
import { startCluster } from './lib/ch_cluster.mjs';
import { within } from './lib/rawhttp.mjs';
import { corpusEntries, dataset } from './hogql/corpus.mjs';

describe('HogQL on one ClickHouse and on a cluster: one answer', () => {
  const stores = [];
  let c;

  before(async () => {
    c = await startCluster();
    const node = c.nodes[0];
    const one = async (sql) => Number((await node.query(sql)).trim());
    const clusterStore = {
      env: { CLICKHOUSE_URL: `${node.url}/?database=default`, CLICKHOUSE_CLUSTER: c.name },
      // after every replica caught up, as a read through any node would see it
      // (0 until the writer's migrations made the tables)
      distinct: async () => {
        if (await one("SELECT count() FROM system.tables WHERE database = 'default' AND name = 'events'") === 0) return 0;
        for (const n of c.nodes) await n.query('SYSTEM SYNC REPLICA events_local');
        return one('SELECT uniqExact(uuid) FROM events');
      },
      stop: async () => {},
    };
    stores.push(await startPair({ queue: 'redis', store: 'clickhouse', persons: 'sqlite' }, {}));
    stores.push(await startPair({ queue: 'redis', store: 'clickhouse', persons: 'sqlite' }, { store: clusterStore }));
    const data = dataset();
    await Promise.all(stores.map(async (s) => {
      const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 200, flushInterval: 0 });
      for (let i = 0; i < 5; i++) client.capture({ distinctId: `user-${i}`, event: '$identify', timestamp: new Date('2024-03-15T00:00:00Z'), properties: { $set: { email: `u${i}@example.com` } } });
      await client.flush();
      for (const e of data) client.capture(e);
      await client.shutdown();
    }));
    for (const s of stores) await within(60000, 'the dataset stored', async () => (await s.store.distinct()) >= 125);
    for (const t of ['persons', 'person_distinct_ids', 'groups']) for (const n of c.nodes) await n.query(`SYSTEM SYNC REPLICA ${t}`);
  });

  after(async () => {
    for (const s of stores) await s.stop();
    await c?.stop();
  });

  test('every corpus query: the same columns and rows on the cluster as on one server', async () => {
    const queries = corpusEntries();
    const differ = [];
    let answered = 0; // both 200: rows compared, not only the same refusal
    for (let i = 0; i < queries.length; i++) {
      const { q } = queries[i];
      const answers = [];
      for (const s of stores) {
        const E = `/api/projects/${s.boot.project_id}/endpoints/`;
        const made = await s.call('POST', E, { name: `q${i}`, query: { kind: 'HogQLQuery', query: q } });
        if (made.status !== 201) {
          answers.push({ status: made.status, detail: made.json?.detail });
          continue;
        }
        const r = await s.call('POST', `${E}q${i}/run`, { limit: 1000 });
        answers.push({ status: r.status, detail: r.json?.detail, columns: r.json?.columns, results: r.json?.results });
      }
      const [single, cluster] = answers;
      if (single.status === 200 && cluster.status === 200) answered++;
      if (JSON.stringify(single) !== JSON.stringify(cluster))
        differ.push(`${q}\n  one server ${JSON.stringify(single).slice(0, 300)}\n  cluster    ${JSON.stringify(cluster).slice(0, 300)}`);
    }
    assert.ok(answered >= 200, `only ${answered} answered on both`);
    assert.deepEqual(differ, [], `${differ.length} of ${queries.length} differ:\n${differ.join('\n')}`);
  });
});
