// retention.test.mjs - EVENT_RETENTION_DAYS on both pairs of backends
// (lib/suite.mjs; docs/backups.md): the writer's prune, driven here every
// 300 ms, deletes events older than the bound from the event store (SQLite
// in slices of EVENT_RETENTION_BATCH rows, here 2, so several slices run;
// ClickHouse through a mutation) and counts them in
// writer_events_pruned_total; events inside the bound stay, in every
// project.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { sleep, within } from './lib/rawhttp.mjs';

const DAY = 86400000;

for (const pair of PAIRS) describe(`event retention: ${pairName(pair)}`, () => {
  let s;
  const count = async (where) => {
    for (;;) {
      try { return Number(await s.store.count(where)); } catch (e) { if (!/locked/.test(e.message)) throw e; }
      await sleep(20);
    }
  };

  before(async () => {
    s = await startPair(pair, { writer: { EVENT_RETENTION_DAYS: '30', EVENT_RETENTION_INTERVAL: '300ms', EVENT_RETENTION_BATCH: '2' } });
  });

  after(async () => { await s?.stop(); });

  test('events older than 30 days are pruned, newer ones stay', async () => {
    const now = Date.now();
    const at = (daysAgo) => new Date(now - daysAgo * DAY).toISOString();
    const batch = [];
    for (let i = 0; i < 7; i++) batch.push({ event: 'old', distinct_id: `u${i % 2}`, uuid: crypto.randomUUID(), timestamp: at(31 + i * 40), properties: {} });
    const young = [at(0), at(1), at(29)].map((t) => ({ event: 'young', distinct_id: 'u0', uuid: crypto.randomUUID(), timestamp: t, properties: {} }));
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch: [...batch, ...young] }) });
    assert.equal(r.status, 200, await r.text());
    await within(20000, 'the young events stored', async () => (await count("event = 'young'")) === 3);
    // The metric counts what a prune's count saw: on ClickHouse an old event
    // stored between a prune's count and its mutation goes with the mutation
    // uncounted (the writer may store the 10 in more than one batch), so the
    // rows are the exact check and the metric must only have moved.
    await within(60000, 'the old events pruned', async () => (await count("event = 'old'")) === 0 && (await s.metric('writer_events_pruned_total')) >= 1);
    // a few more cycles: the young ones are never touched
    await sleep(1000);
    assert.equal(await count("event = 'young'"), 3);
    assert.equal((await s.get(`/api/projects/${s.boot.project_id}/events/?event=young`)).json.results.length, 3);
  });
});
