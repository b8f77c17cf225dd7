// flags_replica.test.mjs - a regional flags fleet reading a Redis replica
// (docs/deploy.md, docs/flags.md "Reading a replica"). The api publishes to
// a primary; two flags processes read only its replica (FLAGS_REDIS_URL;
// REDIS_URL points at a closed port): one with the default staleness bound
// (5 min), one with a tiny one. A flag changed through the api is served by
// both; the replica restarting, or cut from its primary, leaves both serving
// the last definitions; only the tiny bound turns /_ready not ready, with the
// reason, and ready again once the replica is back in sync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');
const FLAGS = path.join(BUILD, 'bin/flags');

// A port nothing listens on: a redis-server started and stopped again.
async function closedPort() {
  const r = await startRedis();
  await r.stop();
  return r.port;
}

test('a flags fleet reading a replica serves changes and bounds its staleness', async (t) => {
  // Redis 7 waits 5 s before a diskless full sync (for more replicas to
  // join); one replica need not wait.
  const primaryArgs = ['--repl-diskless-sync-delay', '0'];
  const primary = await startRedis(0, { persist: true, args: primaryArgs });
  const replicaArgs = ['--replicaof', '127.0.0.1', String(primary.port)];
  let replica = await startRedis(0, { args: replicaArgs });
  const replicaPort = replica.port;
  const linkUp = async () => /master_link_status:up/.test(await redisCommand(replicaPort, 'INFO', 'replication'));
  await within(10000, 'the replica in sync', linkUp);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-flagsreplica-'));
  const env = { API_PORT: '0', REDIS_URL: primary.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'error' };
  const boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...env } })).stdout);
  const api = await startServer(API, env, { ready: true });
  const nowhere = `redis://127.0.0.1:${await closedPort()}/0`;
  const flagsEnv = { FLAGS_PORT: '0', FLAGS_REDIS_URL: replica.url, REDIS_URL: nowhere, LOG_LEVEL: 'error', DEFINITIONS_REFRESH: '60s' };
  const lax = await startServer(FLAGS, flagsEnv);
  const strict = await startServer(FLAGS, { ...flagsEnv, FLAGS_MAX_STALENESS: '2s' });
  t.after(async () => {
    await lax.stop(); await strict.stop(); await api.stop();
    await replica.stop(); await primary.stop(); primary.remove();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const auth = { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' };
  const flagsPath = `http://127.0.0.1:${api.port}/api/projects/${boot.project_id}/feature_flags/`;
  const rollout = (pct) => ({ filters: { groups: [{ properties: [], rollout_percentage: pct }] } });
  const value = async (srv) => {
    const r = await fetch(`http://127.0.0.1:${srv.port}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token: boot.project_api_token, distinct_id: 'u1' }) });
    return r.status === 200 ? (await r.json()).flags?.['regional']?.enabled : `status ${r.status}`;
  };
  const ready = async (srv) => {
    const r = await fetch(`http://127.0.0.1:${srv.port}/_ready`);
    return { ok: r.status === 200, text: await r.text() };
  };
  const both = [lax, strict];
  const setRollout = async (id, pct) => {
    const r = await fetch(`${flagsPath}${id}/`, { method: 'PATCH', headers: auth, body: JSON.stringify(rollout(pct)) });
    assert.equal(r.status, 200, await r.text());
  };

  // A flag made and changed through the api reaches both through the replica.
  const made = await fetch(flagsPath, { method: 'POST', headers: auth, body: JSON.stringify({ key: 'regional', ...rollout(0) }) });
  assert.equal(made.status, 201);
  const flag = await made.json();
  for (const srv of both) await within(10000, 'the fleet sees the new flag off', async () => (await value(srv)) === false);
  await setRollout(flag.id, 100);
  // DEFINITIONS_REFRESH is 60 s: seeing it within 3 s means flags:changed
  // was forwarded by the replica to its subscribers.
  for (const srv of both) await within(3000, 'the change is served', async () => (await value(srv)) === true);
  for (const srv of both) await within(5000, 'ready', async () => (await ready(srv)).ok);

  // Only the replica is read: the primary has no subscriber (the api only
  // publishes) while the replica has one per flags process.
  const subs = (list) => list.split('\n').filter((l) => / sub=[1-9]/.test(l)).length;
  assert.equal(subs(await redisCommand(primary.port, 'CLIENT', 'LIST')), 0);
  assert.equal(subs(await redisCommand(replicaPort, 'CLIENT', 'LIST')), 2);

  // The replica restarts (empty, no persistence, resyncing from the
  // primary): both keep serving; only the tiny bound turns not ready, with
  // the reason; both are ready again once the replica is back.
  await replica.stop();
  await within(5000, 'the tiny bound is not ready', async () => !(await ready(strict)).ok);
  const why = (await ready(strict)).text;
  assert.match(why, /FLAGS_MAX_STALENESS/);
  assert.match(why, /unreachable|subscribed/);
  for (const srv of both) assert.equal(await value(srv), true, 'the last definitions are served');
  assert.ok((await ready(lax)).ok, 'within the default bound the fleet stays ready');
  const age = (await (await fetch(`http://127.0.0.1:${lax.port}/metrics`)).text()).match(/^flags_definitions_age_seconds (\S+)/m);
  assert.ok(age && Number(age[1]) > 0, 'the age the probe measures grows while the replica is away');
  // While the replica is away the flag changes on the primary.
  await setRollout(flag.id, 0);
  // The primary now delays the resync by 3 s, so the flags processes find
  // the restarted replica up, empty and not in sync.
  await redisCommand(primary.port, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '3');
  replica = await startRedis(replicaPort, { args: replicaArgs });
  // Until it has resynced the restarted replica is empty: flags must not
  // read that (every token would be unknown). Every answer meanwhile is the
  // old value or the new one, never a refusal.
  const seen = new Set();
  await within(10000, 'the change made while away is served', async () => {
    const v = [await value(lax), await value(strict)];
    v.forEach((x) => seen.add(x));
    return v.every((x) => x === false);
  });
  assert.deepEqual([...seen].filter((x) => typeof x !== 'boolean'), []);
  await redisCommand(primary.port, 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
  await within(10000, 'ready again', async () => (await ready(strict)).ok);
  assert.ok((await ready(lax)).ok);

  // The replica cut from its primary (the primary dies): it still answers
  // but its copy no longer follows. Both serve what they have; only the
  // tiny bound is not ready, naming the link.
  await primary.stop();
  await within(5000, 'the tiny bound is not ready', async () => !(await ready(strict)).ok);
  assert.match((await ready(strict)).text, /link to its primary is down/);
  assert.ok((await ready(lax)).ok);
  for (const srv of both) assert.equal(await value(srv), false);
  // The primary back (its data persisted): the replica resyncs, the
  // fleet is ready again and follows changes.
  await startRedis(primary.port, { persist: true, dir: primary.dir, args: primaryArgs }).then((p) => t.after(() => p.stop()));
  await within(15000, 'ready again once the link is up', async () => (await ready(strict)).ok);
  await within(10000, 'the api reaches the primary again', async () => {
    const r = await fetch(`${flagsPath}${flag.id}/`, { method: 'PATCH', headers: auth, body: JSON.stringify(rollout(100)) });
    return r.status === 200;
  });
  for (const srv of both) await within(5000, 'a change after the resync is served', async () => (await value(srv)) === true);
});
