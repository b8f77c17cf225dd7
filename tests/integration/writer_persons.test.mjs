// writer_persons.test.mjs - 10,000 events from posthog-node through ingest
// and the writer, with identify, alias, groupIdentify, $set_once and
// personless events mixed in: every event is in the store exactly once,
// and the persons are the ones a table of expected merges, written here,
// says (including the merges PostHog refuses).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PostHog } from 'posthog-node';
import { redisCommand } from './lib/redis.mjs';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const USERS = 100;
const TOTAL = 10000;

// The script: user i browses anonymously as anon-i, signs up (alias joins
// anon-i to user-i), sets properties; every 10th user later tries to alias
// the next user's id, which PostHog refuses (that person is identified);
// every 7th browses personless as ghost-i; companies get groupIdentify.
function script() {
  const calls = [];
  for (let i = 0; i < USERS; i++) {
    calls.push(['capture', { distinctId: `anon-${i}`, event: '$pageview', properties: { $current_url: `https://x/${i}`, $browser: 'Firefox' } }]);
    calls.push(['capture', { distinctId: `anon-${i}`, event: 'signup_started', properties: { $set_once: { first_touch: `t${i}` } } }]);
  }
  for (let i = 0; i < USERS; i++) {
    calls.push(['alias', { distinctId: `user-${i}`, alias: `anon-${i}` }]);
    calls.push(['identify', { distinctId: `user-${i}`, properties: { email: `u${i}@example.com`, n: i } }]);
    calls.push(['groupIdentify', { groupType: 'company', groupKey: `c${i % 5}`, properties: { size: i } }]);
  }
  for (let i = 0; i < USERS; i += 10) calls.push(['alias', { distinctId: `user-${i}`, alias: `user-${i + 1}` }]);
  let k = 0;
  while (calls.length < TOTAL) {
    const i = k % USERS;
    if (k % 7 === 0) calls.push(['capture', { distinctId: `ghost-${i}`, event: 'beacon', properties: { $process_person_profile: false } }]);
    else calls.push(['capture', { distinctId: `user-${i}`, event: 'action', properties: { k, $set: { last_k: k } } }]);
    k++;
  }
  return calls;
}

for (const pair of PAIRS) describe(`persons from 10,000 posthog-node events (${pairName(pair)})`, () => {
  let s, client;
  const uuids = [];
  const get = async (p) => (await s.get(p)).json;

  before(async () => {
    s = await startPair(pair);
    client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 200, flushInterval: 0, maxQueueSize: 20000 });
  });

  after(async () => {
    await client?.shutdown();
    await s?.stop();
  });

  test('every event once, persons as the merge table says', async () => {
    for (const [method, args] of script()) {
      if (method === 'capture') {
        const uuid = randomUUID();
        uuids.push(uuid);
        client.capture({ ...args, uuid });
      } else {
        client[method](args);
      }
    }
    await client.flush();
    await within(60000, 'all events stored', async () => (await s.metric('writer_events_stored_total')) >= TOTAL);
    assert.equal(await s.metric('writer_events_stored_total'), TOTAL, 'no event stored twice');
    assert.equal(await s.store.count(), TOTAL);
    assert.equal(await s.metric('writer_ingestion_warnings_total'), 10, 'ten refused merges');

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
    assert.equal(group.size, 95, 'the last groupIdentify of c0 wins');
    // A sample of the captured uuids, read back one by one.
    const last = (await get(`/api/projects/${s.boot.project_id}/events/?event=action&limit=1`)).results[0];
    assert.ok(uuids.includes(last.id));
  });
});
