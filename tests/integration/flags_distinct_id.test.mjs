// flags_distinct_id.test.mjs - the decision on long distinct ids
// (docs/flags.md, rule 1): conditions hash the whole id, as posthog-node
// does, while the stored person is found under the first 200 characters,
// the key ingest stores it under.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { sleep } from './lib/rawhttp.mjs';

// posthog-node's bucketing: sha1("<key>.<id>"), first 15 hex digits over 0xfffffffffffffff.
const hash = (key, id) => parseInt(crypto.createHash('sha1').update(`${key}.${id}`).digest('hex').slice(0, 15), 16) / 0xfffffffffffffff;

test('a 254-character distinct_id: rollout hashes all of it; the stored person is read by its first 200 characters', async () => {
  const redis = await startRedis(0);
  let flags;
  try {
    await redisCommand(redis.port, 'HSET', 'projects:tokens', 'phc_long', '7');
    const half = { id: 1, team_id: 7, key: 'half', active: true, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } };
    const pro = { id: 2, team_id: 7, key: 'pro', active: true, filters: { groups: [{ properties: [{ key: 'plan', type: 'person', value: 'pro', operator: 'exact' }], rollout_percentage: 100 }] } };
    await redisCommand(redis.port, 'HSET', 'flags:definitions', '7', JSON.stringify({ flags: [half, pro], group_type_mapping: {}, cohorts: {} }));
    const prefix = 'u'.repeat(200);
    await redisCommand(redis.port, 'SET', `persons:7:${prefix}`, JSON.stringify({ properties: { plan: 'pro' } }));
    flags = await startServer(path.join(BUILD, 'bin/flags'), { FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn' });
    const base = `http://127.0.0.1:${flags.port}`;
    for (let i = 0; i < 200 && (await fetch(`${base}/_ready`).catch(() => null))?.status !== 200; i++) await sleep(25);
    let on = 0;
    for (let n = 0; n < 40; n++) {
      // The same first 200 characters, a different tail: only the whole id tells them apart.
      const id = `${prefix}-${String(n).padStart(53, '0')}`;
      assert.equal(id.length, 254);
      const r = await (await fetch(`${base}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token: 'phc_long', distinct_id: id }) })).json();
      assert.equal(r.flags.half.enabled, hash('half', id) < 0.5, `id #${n}`);
      assert.equal(r.flags.pro.enabled, true, 'the stored person, under the first 200 characters');
      on += r.flags.half.enabled ? 1 : 0;
    }
    assert.ok(on > 0 && on < 40, `the tails decide the rollout (${on} of 40 on)`);
  } finally {
    if (flags) assert.equal((await flags.stop()).code, 0);
    await redis.stop();
  }
});
