// flags_stall.test.mjs - requests built to cost the flags service the most
// evaluation work are answered correctly, and the service keeps answering
// others meanwhile (how long it holds its loop is measured by
// scripts/bench stall, not asserted here):
//   - 10,000 flags with one `exact` person-property filter each, against a
//     request carrying 50,000 person properties: every value is found (the
//     request's properties are indexed once, the last duplicate wins);
//   - 1,000 flags with the catastrophic regex ^(a+)+$ and a subject of 28
//     "a" and a "b": the regex budget (FLAGS_REGEX_BUDGET) cuts the request
//     short, the regex flags are errors (errorsWhileComputingFlags), the
//     other flags are still evaluated, and the metric counts it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { sleep } from './lib/rawhttp.mjs';

const FLAGS = path.join(BUILD, 'bin/flags');
const TOKEN = 'phc_stall';

const flag = (i, key, prop) => ({ id: i + 1, team_id: 1, key, active: true, deleted: false, version: 1, filters: { groups: [{ properties: prop ? [prop] : [], rollout_percentage: 100 }] } });

describe('flags under heavy requests', () => {
  let redis;

  before(async () => {
    redis = await startRedis(0);
    await redisCommand(redis.port, 'HSET', 'projects:tokens', TOKEN, '1');
  });

  after(async () => {
    if (redis) await redis.stop();
  });

  // Starts flags on the given definitions; returns base URL and server.
  async function flagsWith(list, env = {}) {
    await redisCommand(redis.port, 'HSET', 'flags:definitions', '1', JSON.stringify({ flags: list, group_type_mapping: {}, cohorts: {} }));
    const srv = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn', FLAGS_MAX_BODY: '4MiB', ...env });
    const base = `http://127.0.0.1:${srv.port}`;
    for (let i = 0; i < 200; i++) {
      const r = await fetch(`${base}/_ready`).catch(() => null);
      if (r && r.status === 200) break;
      await sleep(25);
    }
    return { srv, base };
  }

  // Sends body while probing /_health; returns the answer and the probes.
  async function withProbes(base, body) {
    let running = true;
    let probes = 0;
    const loop = (async () => {
      while (running) {
        const r = await fetch(`${base}/_health`);
        assert.equal(r.status, 200);
        await r.text();
        probes++;
        await sleep(20);
      }
    })();
    const r = await fetch(`${base}/flags?v=2`, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
    const json = await r.json();
    running = false;
    await loop;
    return { status: r.status, json, probes };
  }

  test('10,000 exact flags against 50,000 request properties: every flag reads its own property', async () => {
    const list = Array.from({ length: 10000 }, (_, i) => flag(i, `f${i}`, { key: `p${i * 5}`, type: 'person', value: `v${i * 5}`, operator: 'exact' }));
    const props = Object.fromEntries(Array.from({ length: 50000 }, (_, i) => [`p${i}`, `v${i}`]));
    // A duplicate key in the JSON text: the last one wins, as before.
    const body = JSON.stringify({ token: TOKEN, distinct_id: 'u1', person_properties: props }).replace('"p0":"v0"', '"p0":"v0","p0":"other"');
    const { srv, base } = await flagsWith(list);
    try {
      const r = await fetch(`${base}/flags?v=2`, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
      assert.equal(r.status, 200);
      const res = await r.json();
      assert.equal(res.errorsWhileComputingFlags, false);
      assert.equal(res.flags.f0.enabled, false, 'p0 is "other" (last duplicate)');
      for (let i = 1; i < 10000; i++) assert.equal(res.flags[`f${i}`].enabled, true, `f${i}`);
      // With a property changed, exactly that flag turns false.
      props.p35 = 'nope';
      const again = await withProbes(base, { token: TOKEN, distinct_id: 'u1', person_properties: props });
      assert.equal(again.status, 200);
      assert.equal(again.json.flags.f7.enabled, false);
      assert.equal(again.json.flags.f8.enabled, true);
    } finally {
      const { code } = await srv.stop();
      assert.equal(code, 0);
    }
  });

  test('10,000 flags, a 50,000-entry flag_keys_to_evaluate and device bucketing over 50,000 properties: lists and lookups read once', async () => {
    const list = Array.from({ length: 10000 }, (_, i) => ({ ...flag(i, `k${i}`, { key: `p${i}`, type: 'person', value: `v${i}`, operator: 'exact' }), bucketing_identifier: i % 2 ? 'device_id' : undefined }));
    const props = Object.fromEntries(Array.from({ length: 50000 }, (_, i) => [`p${i}`, `v${i}`]));
    props.$device_id = 'dev-1';
    // Every third flag asked for, among 40,000 keys of no flag.
    const keys = [...Array.from({ length: 10000 }, (_, i) => i).filter((i) => i % 3 === 0).map((i) => `k${i}`), ...Array.from({ length: 40000 }, (_, i) => `nope${i}`)];
    const { srv, base } = await flagsWith(list);
    try {
      const r = await withProbes(base, { token: TOKEN, distinct_id: 'u1', person_properties: props, flag_keys_to_evaluate: keys });
      assert.equal(r.status, 200);
      const got = Object.keys(r.json.flags);
      assert.equal(got.length, 3334);
      for (const k of got) assert.equal(Number(k.slice(1)) % 3, 0, k);
      assert.equal(r.json.flags.k0.enabled, true);
      assert.equal(r.json.flags.k3.enabled, true, 'device bucketing reads $device_id from the properties');
      assert.equal(r.json.errorsWhileComputingFlags, false);
    } finally {
      const { code } = await srv.stop();
      assert.equal(code, 0);
    }
  });

  test('1,000 catastrophic regex flags: the budget cuts the request short, the other flags still answer', async () => {
    const list = Array.from({ length: 1000 }, (_, i) => flag(i, `r${i}`, { key: 's', type: 'person', value: '^(a+)+$', operator: 'regex' }));
    list.push(flag(1000, 'plain', { key: 'plan', type: 'person', value: 'pro', operator: 'exact' }));
    list.push(flag(1001, 'everyone'));
    // A budget well above what 1,000 ordinary matches cost even in the
    // sanitizer build, and far below what 1,000 catastrophic ones cost.
    const { srv, base } = await flagsWith(list, { FLAGS_REGEX_BUDGET: '300ms' });
    try {
      const r = await withProbes(base, { token: TOKEN, distinct_id: 'u1', person_properties: { s: `${'a'.repeat(28)}b`, plan: 'pro' } });
      assert.equal(r.status, 200);
      assert.equal(r.json.errorsWhileComputingFlags, true);
      assert.equal(r.json.flags.plain.enabled, true);
      assert.equal(r.json.flags.everyone.enabled, true);
      assert.equal(r.json.flags.r0, undefined, 'a failed flag is left out');
      assert.ok(r.probes >= 0);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, /flags_regex_budget_exhausted_total(\{[^}]*\})? 1\b/);
      // The service is fine afterwards: an ordinary subject matches quickly.
      const ok = await (await fetch(`${base}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token: TOKEN, distinct_id: 'u2', person_properties: { s: 'aaa' } }) })).json();
      assert.equal(ok.errorsWhileComputingFlags, false);
      assert.equal(ok.flags.r999.enabled, true);
    } finally {
      const { code } = await srv.stop();
      assert.equal(code, 0);
    }
  });
});
