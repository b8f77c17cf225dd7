// writer_persons.test.mjs - 10,000 events from posthog-node through ingest
// and the writer, with identify, alias, groupIdentify, $set_once and
// personless events mixed in: every event is in the store exactly once,
// and the persons are the ones a table of expected merges, written here,
// says (including the merges PostHog refuses).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { PostHog } from 'posthog-node';
import { BUILD, startServer } from './lib/proc.mjs';
import { redisCommand } from './lib/redis.mjs';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const USERS = 100;

async function metricOf(proc, name) {
  const text = await (await fetch(`http://127.0.0.1:${proc.port}/metrics`)).text();
  const m = text.match(new RegExp(`^${name} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}
const TOTAL = 10000;

// The script: user i browses anonymously as anon-i, signs up (alias joins
// anon-i to user-i), sets properties; later (a second phase, once the first
// is stored: events of different distinct ids may be taken in any order, on
// Kafka they sit on different partitions) every 10th user tries to alias
// the next user's id, which PostHog refuses (that person is identified),
// and everyone acts; every 7th act is a personless ghost's.
function script() {
  const calls = [];
  const phases = [calls];
  for (let i = 0; i < USERS; i++) {
    calls.push(['capture', { distinctId: `anon-${i}`, event: '$pageview', properties: { $current_url: `https://x/${i}`, $browser: 'Firefox' } }]);
    calls.push(['capture', { distinctId: `anon-${i}`, event: 'signup_started', properties: { $set_once: { first_touch: `t${i}` } } }]);
  }
  for (let i = 0; i < USERS; i++) {
    calls.push(['alias', { distinctId: `user-${i}`, alias: `anon-${i}` }]);
    calls.push(['identify', { distinctId: `user-${i}`, properties: { email: `u${i}@example.com`, n: i } }]);
    calls.push(['groupIdentify', { groupType: 'company', groupKey: `c${i % 5}`, properties: { size: i } }]);
  }
  const later = [];
  phases.push(later);
  for (let i = 0; i < USERS; i += 10) later.push(['alias', { distinctId: `user-${i}`, alias: `user-${i + 1}` }]);
  // Seconds after the first phase's, so the latest is clear whichever
  // writer takes which (the first phase's come within a millisecond).
  later.push(['groupIdentify', { groupType: 'company', groupKey: 'c0', properties: { size: 1000, renamed: true } }]);
  let k = 0;
  while (calls.length + later.length < TOTAL) {
    const i = k % USERS;
    if (k % 7 === 0) later.push(['capture', { distinctId: `ghost-${i}`, event: 'beacon', properties: { $process_person_profile: false } }]);
    else later.push(['capture', { distinctId: `user-${i}`, event: 'action', properties: { k, $set: { last_k: k } } }]);
    k++;
  }
  return phases;
}

for (const pair of PAIRS) describe(`persons from 10,000 posthog-node events (${pairName(pair)})`, () => {
  let s, client;
  const uuids = [];
  const get = async (p) => (await s.get(p)).json;

  let second;

  before(async () => {
    s = await startPair(pair, { writer: { WRITER_BATCH: '200' } });
    // Two writers in one group share the work: no event twice, no person
    // update lost between them (PostgreSQL: conflicting transactions are
    // redone; SQLite: one writer at a time).
    second = await startServer(path.join(BUILD, 'bin/writer'), s.writerEnv);
    client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 200, flushInterval: 0, maxQueueSize: 20000 });
  });

  after(async () => {
    await client?.shutdown();
    await second?.stop();
    await s?.stop();
  });

  test('every event once, persons as the merge table says', async () => {
    const both = async (name) => (await s.metric(name)) + (await metricOf(second, name));
    let sent = 0;
    for (const phase of script()) {
      for (const [method, args] of phase) {
        if (method === 'capture') {
          const uuid = randomUUID();
          uuids.push(uuid);
          client.capture({ ...args, uuid });
        } else {
          client[method](args);
        }
      }
      await client.flush();
      sent += phase.length;
      await within(60000, `the ${sent} events sent so far stored`, async () => (await both('writer_events_stored_total')) >= sent);
    }
    await within(60000, 'all events stored', async () => (await both('writer_events_stored_total')) >= TOTAL);
    assert.equal(await both('writer_events_stored_total'), TOTAL, 'no event stored twice');
    assert.equal(await s.store.count(), TOTAL);
    assert.equal(await both('writer_ingestion_warnings_total'), 10, 'ten refused merges');
    assert.ok((await s.metric('writer_events_stored_total')) > 0 && (await metricOf(second, 'writer_events_stored_total')) > 0, 'both writers took part');

    // The merge table: user-i has {user-i, anon-i}, the refused aliases
    // leave user-(i+1) apart; ghosts have no person.
    for (let i = 0; i < USERS; i++) {
      const r = (await get(`/api/projects/${s.boot.project_id}/persons/?distinct_id=user-${i}`)).results;
      assert.equal(r.length, 1, `user-${i} has a person`);
      assert.deepEqual([...r[0].distinct_ids].sort(), [`anon-${i}`, `user-${i}`].sort(), `user-${i}'s ids`);
      assert.equal(r[0].properties.email, `u${i}@example.com`);
      assert.equal(r[0].properties.first_touch, `t${i}`);
      assert.equal(r[0].properties.$initial_current_url, `https://x/${i}`);
      assert.equal(r[0].is_identified, true);
    }
    for (const i of [0, 3, 6]) {
      const g = (await get(`/api/projects/${s.boot.project_id}/persons/?distinct_id=ghost-${i * 7 % USERS}`)).results;
      assert.deepEqual(g, []);
    }
    const group = JSON.parse(await redisCommand(s.redis.port, 'GET', `groups:${s.boot.project_id}:company:c0`));
    assert.equal(group.size, 1000, 'the latest groupIdentify of c0 wins');
    assert.equal(group.renamed, true);
    // A sample of the captured uuids, read back one by one.
    const last = (await get(`/api/projects/${s.boot.project_id}/events/?event=action&limit=1`)).results[0];
    assert.ok(uuids.includes(last.id));
  });
});
