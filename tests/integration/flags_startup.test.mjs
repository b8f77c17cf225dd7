// flags_startup.test.mjs - before its first read of Redis the flags service
// knows no token, valid or not: it answers 503 not_ready (the SDKs retry),
// not 401 "Project API key invalid" (they would give up), then serves the
// same token once Redis is up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { sleep } from './lib/rawhttp.mjs';

const FLAGS = path.join(BUILD, 'bin/flags');
const TOKEN = 'phc_startup_test';
const ENVELOPE = { flags: [{ id: 1, team_id: 7, key: 'on', active: true, deleted: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }], group_type_mapping: {}, cohorts: {} };

test('a valid token before the first load gets 503, then its flags', async (t) => {
  // The data is written first and kept on disk; Redis is then stopped, so
  // flags starts on a port where nothing listens and cannot have loaded
  // anything, and the restarted Redis has every table at once.
  const first = await startRedis(0, { persist: true });
  const port = first.port;
  await redisCommand(port, 'HSET', 'flags:definitions', '7', JSON.stringify(ENVELOPE));
  await redisCommand(port, 'HSET', 'projects:tokens', TOKEN, '7');
  await first.stop();
  const flags = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: `redis://127.0.0.1:${port}/0`, LOG_LEVEL: 'error' });
  let redis;
  t.after(async () => { await flags.stop(); await redis?.stop(); first.remove(); });
  const base = `http://127.0.0.1:${flags.port}`;
  const ask = () => fetch(`${base}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token: TOKEN, distinct_id: 'u1' }) });

  const early = await ask();
  assert.equal(early.status, 503);
  assert.equal(early.headers.get('retry-after'), '1');
  assert.equal((await early.json()).code, 'not_ready');
  const defs = await fetch(`${base}/flags/definitions?token=${TOKEN}`);
  assert.equal(defs.status, 503, 'local evaluation waits too');

  redis = await startRedis(port, { persist: true, dir: first.dir });
  let r;
  for (let i = 0; i < 200; i++) {
    r = await ask();
    if (r.status !== 503) break;
    await sleep(50);
  }
  assert.equal(r.status, 200);
  assert.equal((await r.json()).flags.on.enabled, true);
  const unknown = await fetch(`${base}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token: 'phc_nope', distinct_id: 'u1' }) });
  assert.equal(unknown.status, 401, 'once loaded, an unknown token is refused');
});
