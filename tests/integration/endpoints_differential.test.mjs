// endpoints_differential.test.mjs - the differential corpus
// (hogql/corpus.mjs and corpus_*.mjs beside it, over 200 queries) run as endpoints on both pairs of
// backends at once, over the same dataset sent through each pair's ingest
// by posthog-node: SQLite and ClickHouse 18.16 must give the same columns
// and the same rows for every query either can run.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';
import { corpusEntries, dataset, CLICKHOUSE_18_REFUSES } from './hogql/corpus.mjs';

const both = PAIRS.length === 2;

describe('HogQL on SQLite and on ClickHouse: one answer', { skip: !both && 'needs both pairs' }, () => {
  const stores = [];

  before(async () => {
    for (const pair of PAIRS) stores.push(await startPair(pair, {}));
    const data = dataset();
    await Promise.all(stores.map(async (s) => {
      const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 200, flushInterval: 0 });
      // posthog-node's identify, with a time of our own: stamped "now", the
      // two stores' copies could fall on either side of a second
      for (let i = 0; i < 5; i++) client.capture({ distinctId: `user-${i}`, event: '$identify', timestamp: new Date('2024-03-15T00:00:00Z'), properties: { $set: { email: `u${i}@example.com` } } });
      await client.flush();
      for (const e of data) client.capture(e);
      await client.shutdown();
    }));
    for (const s of stores) await within(60000, 'the dataset stored', async () => (await s.store.distinct()) >= 125);
  });

  after(async () => {
    for (const s of stores) await s.stop();
  });

  test(`${corpusEntries().length} queries, the same rows (and PostHog's where it states them)`, async () => {
    const queries = corpusEntries();
    assert.ok(queries.length >= 200);
    const differ = [];
    let compared = 0;
    for (let i = 0; i < queries.length; i++) {
      const { q, want } = queries[i];
      const answers = [];
      for (const s of stores) {
        const E = `/api/projects/${s.boot.project_id}/endpoints/`;
        const c = await s.call('POST', E, { name: `q${i}`, query: { kind: 'HogQLQuery', query: q } });
        if (c.status !== 201) {
          answers.push({ status: c.status, detail: c.json?.detail });
          continue;
        }
        const r = await s.call('POST', `${E}q${i}/run`, { limit: 1000 });
        answers.push({ status: r.status, detail: r.json?.detail, columns: r.json?.columns, results: r.json?.results });
      }
      const [lite, ch] = answers;
      if (ch.status === 400 && CLICKHOUSE_18_REFUSES.some((re) => re.test(q))) {
        assert.match(ch.detail, /needs ClickHouse/);
        // what 18.16 cannot run, SQLite still answers as PostHog does
        if (want !== undefined && (lite.status !== 200 || JSON.stringify(lite.results) !== JSON.stringify(want)))
          differ.push(`${q}\n  posthog    ${JSON.stringify(want).slice(0, 400)}\n  sqlite     ${lite.status} ${JSON.stringify(lite.results ?? lite.detail).slice(0, 400)}`);
        continue;
      }
      compared++;
      if (lite.status !== 200 || ch.status !== 200) {
        differ.push(`${q}\n  sqlite ${lite.status} ${lite.detail ?? ''}\n  clickhouse ${ch.status} ${ch.detail ?? ''}`);
        continue;
      }
      try {
        assert.deepEqual(ch.columns, lite.columns);
        assert.deepEqual(ch.results, lite.results);
      } catch {
        differ.push(`${q}\n  sqlite     ${JSON.stringify(lite.results).slice(0, 400)}\n  clickhouse ${JSON.stringify(ch.results).slice(0, 400)}`);
        continue;
      }
      if (want === undefined) continue;
      try {
        assert.deepEqual(lite.results, want);
      } catch {
        differ.push(`${q}\n  posthog    ${JSON.stringify(want).slice(0, 400)}\n  both       ${JSON.stringify(lite.results).slice(0, 400)}`);
      }
    }
    assert.ok(compared >= 200, `only ${compared} compared`);
    assert.equal(differ.length, 0, `${differ.length} of ${compared} differ:\n${differ.join('\n')}`);
  });
});
