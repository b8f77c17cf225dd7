// writer_scale.test.mjs - writers scale with partitions (issue 30, section 3).
// One Kafka topic of 16 partitions on the mock broker, several writer
// processes in one consumer group, events in ClickHouse and persons in
// PostgreSQL (what docs/writer.md says several writers need: SQLite is one
// file with one write lock). Shown here:
//   - two writers, then four, share the 16 partitions: each holds some
//     (its queue_consumer_assigned_partitions gauge) and stored some of the
//     events (its writer_events_stored_total), and together they hold 16;
//   - a writer joining makes the group rebalance and it then takes
//     partitions;
//   - a member killed with kill -9 in the middle of a stream: its
//     partitions go to the others after the session timeout, and every
//     event is in the store exactly once. "Exactly once" is counted raw:
//     count() of the events table without FINAL (the ReplacingMergeTree
//     would collapse copies only on a merge, and HogQL's events table is
//     read without FINAL), so a copy written twice would show; the same
//     through the api, as a HogQL endpoint answers it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { startPair, MAIN } from './lib/suite.mjs';
import { BUILD, startServer } from './lib/proc.mjs';
import { within, sleep } from './lib/rawhttp.mjs';

const PARTITIONS = 16;
const pair = { queue: 'kafka', store: 'clickhouse', persons: 'postgres' };

// This member's gauge for the main topic (undefined before its first rebalance).
async function assigned(w) {
  const text = await (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text();
  const m = text.match(new RegExp(`^queue_consumer_assigned_partitions\\{topic="${MAIN}"\\} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

async function stored(w) {
  const text = await (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text();
  const m = text.match(/^writer_events_stored_total (\d+)$/m);
  return m ? Number(m[1]) : 0;
}

describe('writers share a topic of 16 partitions (kafka + clickhouse, persons on postgres)', () => {
  let s;
  const extra = []; // writers started here, beside the suite's own
  const sent = [];
  let nextUser = 0;

  // Members alive now: the suite's writer and those started here.
  const members = () => [s.writer, ...extra].filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  const addWriter = async () => {
    const w = await startServer(path.join(BUILD, 'bin', 'writer'), s.writerEnv);
    extra.push(w);
    return w;
  };
  // Every live member holds some partitions and together they hold all 16.
  const shared = async (n) => {
    let last = [];
    try {
      await within(60000, `${n} writers share the partitions`, async () => {
        const ws = members();
        last = await Promise.all(ws.map(assigned));
        return ws.length === n && last.every((a) => a > 0) && last.reduce((x, y) => x + y, 0) === PARTITIONS;
      });
    } catch (e) {
      e.message += ` (assigned: ${JSON.stringify(last)})`;
      throw e;
    }
    return last;
  };
  const capture = async (count, event) => {
    for (let i = 0; i < count; i += 200) {
      const batch = [];
      for (let j = i; j < Math.min(count, i + 200); j++) {
        const uuid = randomUUID();
        sent.push(uuid);
        // Many distinct ids: ingest keys messages by distinct id, so every partition gets some.
        batch.push({ event, distinct_id: `user-${nextUser++ % 400}`, uuid, properties: { j, $set: { last: j } } });
      }
      const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch }) });
      assert.equal(r.status, 200, await r.text());
    }
  };
  const allStored = async () => {
    let n = 0;
    try {
      await within(120000, 'every event stored', async () => (n = await s.store.distinct()) >= sent.length);
    } catch (e) {
      e.message += ` (${n} of ${sent.length}; ${await s.whereAre(sent, await s.store.uuids())})`;
      throw e;
    }
  };

  before(async () => {
    s = await startPair(pair, {
      partitions: PARTITIONS,
      writer: { LOG_LEVEL: process.env.WRITER_LOG || 'warn', WRITER_BATCH: '200' },
    });
  });

  after(async () => {
    for (const w of extra) await w.stop('SIGKILL');
    await s?.stop();
  });

  test('two writers share the partitions and both store events', async () => {
    await shared(1); // one writer alone holds every partition
    const second = await addWriter();
    const split = await shared(2);
    assert.ok(split.every((a) => a < PARTITIONS), `the partitions were split: ${split}`);
    const before = await Promise.all(members().map(stored));
    await capture(2000, 'two');
    await allStored();
    // The counter moves once the whole batch is through (the Redis copies
    // after the event store): it may trail the table by a moment.
    let mine = [];
    await within(20000, 'the writers counted what they stored', async () => {
      mine = (await Promise.all(members().map(stored))).map((a, i) => a - before[i]);
      return mine.reduce((x, y) => x + y, 0) >= 2000;
    }).catch(() => {});
    assert.ok(mine.every((n) => n > 0), `each writer stored some of the events: ${mine}`);
    assert.equal(mine.reduce((x, y) => x + y, 0), 2000, `between them, every event once: ${mine}`);
    assert.equal(await s.store.count("event = 'two'"), 2000, 'no row twice');
    assert.ok(await assigned(second) > 0);
  });

  test('four writers: joining rebalances, a kill -9 mid-stream loses nothing and doubles nothing', async () => {
    // Two join: the group rebalances and the newcomers take partitions.
    const joined = [await addWriter(), await addWriter()];
    await shared(4);
    for (const w of joined) assert.ok(await assigned(w) > 0, 'a joining writer took partitions');

    // A stream of 6,000 events; the second writer is killed in the middle of it.
    const victim = extra[0];
    const victimHeld = await assigned(victim);
    const victimBefore = await stored(victim);
    const streaming = (async () => {
      for (let k = 0; k < 12; k++) {
        await capture(500, 'four');
        await sleep(100);
      }
    })();
    await within(60000, 'the victim is storing this stream', async () => (await stored(victim)) > victimBefore + 300);
    victim.child.kill('SIGKILL');
    await victim.exited;
    await streaming;
    // Its partitions go to the three left once its session (6 s) runs out.
    const left = await shared(3);
    assert.ok(left.every((a) => a > 0), `${left}`);
    assert.ok(victimHeld > 0);

    // One more joins after the kill: it takes partitions too.
    const late = await addWriter();
    await shared(4);
    assert.ok(await assigned(late) > 0, 'the late writer took partitions');

    await allStored();
    const uuids = await s.store.uuids();
    assert.equal(uuids.length, sent.length, `no event stored twice (raw rows, no FINAL): ${uuids.length} rows for ${sent.length} events`);
    assert.deepEqual(new Set(uuids), new Set(sent), 'the stored events are the ones sent');
    assert.equal(await s.store.count("event = 'four'"), 6000);

    // What the api answers: a HogQL endpoint counting raw rows and distinct uuids.
    const E = `/api/projects/${s.boot.project_id}/endpoints/`;
    let r = await s.call('POST', E, { name: 'scale-count', query: { kind: 'HogQLQuery', query: 'SELECT count() AS n, count(DISTINCT uuid) AS d FROM events' } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await s.call('POST', `${E}scale-count/run`, {});
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.results, [[sent.length, sent.length]]);

    // The survivors keep storing: a last burst lands once.
    await capture(400, 'after');
    await allStored();
    assert.equal(await s.store.count("event = 'after'"), 400);
  });
});
