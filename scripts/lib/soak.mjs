// soak.mjs SECONDS - the whole suite under traffic and faults (scripts/soak).
//
// Redis (append-only, fsync always: it is also the queue, as Redis
// Streams), the api, ingest, flags and the writer (SQLite stores) behind the
// nginx edge. For SECONDS, posthog-node sends events through the edge while
// flags are created and changed through the api and evaluated through the
// edge; meanwhile kill -9 takes, in turn, the writer, Redis (the queue),
// ingest and flags, each started again two seconds later on its port.
// Then: every event that got a 200 is in the event store exactly once (no
// other row), every flag's last change is what the fleet answers, and no
// process's RSS grew without bound. Prints the counts; exits 1 on a breach.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { BUILD, ROOT, startServer } from '../../tests/integration/lib/proc.mjs';
import { startRedis, redisCommand } from '../../tests/integration/lib/redis.mjs';
import { startEdge } from '../../tests/integration/lib/edge.mjs';

const require = createRequire(path.join(ROOT, 'tests/package.json'));
const { PostHog } = require('posthog-node');
const run = promisify(execFile);
const BIN = (n) => path.join(BUILD, 'bin', n);
const SECONDS = Number(process.argv[2] || 60);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}]`, ...a);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(12000 + Math.floor(Math.random() * 20000), '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function rssKb(pid) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-soak-'));
const procs = {}; // name -> {start(), srv, rss: [[t, kb]...] per incarnation}
let failures = 0;
const fail = (msg) => { failures++; log(`FAIL ${msg}`); };

async function main() {
  const redisPort = await freePort();
  const redisDir = path.join(tmp, 'redis');
  fs.mkdirSync(redisDir);
  let redis = await startRedis(redisPort, { persist: true, dir: redisDir });
  const common = { REDIS_URL: redis.url, LOG_LEVEL: 'error' };
  const stores = { DATABASE_URL: `sqlite:${tmp}/meta.db`, EVENTS_DB: `${tmp}/events.db`, PERSONS_DATABASE_URL: `sqlite:${tmp}/persons.db` };
  const apiEnv = { ...common, ...stores, API_PORT: String(await freePort()), PUBLISH_RETRY: '200ms' };
  const boot = JSON.parse((await run(BIN('api'), ['bootstrap'], { env: { ...process.env, ...apiEnv } })).stdout);
  const services = {
    api: apiEnv,
    ingest: { ...common, INGEST_PORT: String(await freePort()), INGEST_TRUSTED_PROXIES: '1', QUEUE_TIMEOUT: '5s' },
    flags: { ...common, FLAGS_PORT: String(await freePort()), FLAGS_TRUSTED_PROXIES: '1' },
    writer: { ...common, ...stores, WRITER_PORT: String(await freePort()), WRITER_CLAIM_IDLE: '1s', WRITER_RETRY_MAX: '500ms' },
  };
  for (const [name, env] of Object.entries(services)) {
    procs[name] = { incarnations: [] };
    procs[name].start = async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          const srv = await startServer(BIN(name), env, { timeoutMs: 20000, ready: name === 'api' });
          procs[name].srv = srv;
          procs[name].incarnations.push({ pid: srv.pid, rss: [] });
          return;
        } catch (e) {
          if (attempt >= 20) throw e;
          await sleep(250); // the port is still held by the one just killed
        }
      }
    };
    await procs[name].start();
  }
  const edge = await startEdge({ api: Number(apiEnv.API_PORT), ingest: Number(services.ingest.INGEST_PORT), flags: Number(services.flags.FLAGS_PORT) });
  const api = `http://127.0.0.1:${apiEnv.API_PORT}/api/projects/${boot.project_id}`;
  const key = { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' };
  log(`running ${SECONDS} s: edge ${edge.url}, data in ${tmp}`);

  // RSS every 2 s, per incarnation
  const t0 = Date.now();
  const sampler = setInterval(() => {
    for (const p of Object.values(procs)) {
      const inc = p.incarnations.at(-1);
      const kb = inc && rssKb(inc.pid);
      if (kb) inc.rss.push([Date.now() - t0, kb]);
    }
  }, 2000);

  // events
  const acked = new Set();
  const sent = new Set();
  const client = new PostHog(boot.project_api_token, {
    host: edge.url, flushAt: 100, flushInterval: 200, maxQueueSize: 100000,
    fetchRetryCount: 20, fetchRetryDelay: 500, requestTimeout: 15000,
  });
  let clientErrors = 0;
  client.on('error', () => { clientErrors++; });
  client.on('flush', (messages) => { for (const m of messages) acked.add(m.uuid); });
  const deadline = t0 + SECONDS * 1000;
  const traffic = (async () => {
    let i = 0;
    while (Date.now() < deadline) {
      for (let k = 0; k < 20; k++, i++) {
        const uuid = randomUUID();
        sent.add(uuid);
        client.capture({ distinctId: `soak-${i % 500}`, event: i % 7 ? 'soak tick' : '$pageview', uuid, properties: { i, $set: { last: i } } });
      }
      await sleep(100); // about 200 events a second
    }
  })();

  // flags: one created every 3 s, some flipped later; the last state kept
  const flags = new Map(); // key -> {id, rollout}
  let flagErrors = 0;
  const flagWork = (async () => {
    let n = 0;
    while (Date.now() < deadline) {
      try {
        if (n % 3 === 2 && flags.size) { // flip an older one
          const [fk, f] = [...flags][n % flags.size];
          const rollout = f.rollout === 100 ? 0 : 100;
          const r = await fetch(`${api}/feature_flags/${f.id}/`, { method: 'PATCH', headers: key, body: JSON.stringify({ filters: { groups: [{ properties: [], rollout_percentage: rollout }] } }) });
          if (r.status === 200) flags.set(fk, { ...f, rollout });
          else flagErrors++;
        } else {
          const fk = `soak-flag-${n}`;
          const rollout = n % 2 ? 100 : 0;
          const r = await fetch(`${api}/feature_flags/`, { method: 'POST', headers: key, body: JSON.stringify({ key: fk, filters: { groups: [{ properties: [], rollout_percentage: rollout }] } }) });
          if (r.status === 201) flags.set(fk, { id: (await r.json()).id, rollout });
          else flagErrors++;
        }
      } catch {
        flagErrors++;
      }
      n++;
      // an evaluation through the edge, which may fail during a fault
      fetch(`${edge.url}/flags/?v=2`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: boot.project_api_token, distinct_id: 'soak-eval' }) }).catch(() => {});
      await sleep(3000);
    }
  })();

  // faults: kill -9 in turn, restart two seconds later
  const order = ['writer', 'redis', 'ingest', 'flags'];
  const kills = Object.fromEntries(order.map((n) => [n, 0]));
  const faults = (async () => {
    const every = Math.max(5000, (SECONDS * 1000) / (order.length * 2 + 1));
    for (let k = 0; Date.now() + every < deadline; k++) {
      await sleep(every);
      const name = order[k % order.length];
      log(`kill -9 ${name}`);
      kills[name]++;
      if (name === 'redis') {
        redis.child.kill('SIGKILL');
        await new Promise((r) => redis.child.once('exit', r)).catch(() => {});
        await sleep(2000);
        redis = await startRedis(redisPort, { persist: true, dir: redisDir });
      } else {
        await procs[name].srv.stop('SIGKILL');
        await sleep(2000);
        await procs[name].start();
      }
    }
  })();

  await Promise.all([traffic, flagWork, faults]);
  log('traffic over: flushing the client, waiting for the writer');
  await client.shutdown(120000);
  // everything acknowledged is queued: the writer catches up
  const stored = () => run('sqlite3', [`${tmp}/events.db`, 'SELECT count(*), count(DISTINCT uuid) FROM events']).then((r) => r.stdout.trim().split('|').map(Number)).catch(() => [0, 0]);
  let last = -1;
  for (let still = 0; still < 10;) {
    const [rows] = await stored();
    still = rows === last ? still + 1 : 0;
    last = rows;
    if (rows >= acked.size && still >= 2) break;
    await sleep(1000);
  }
  clearInterval(sampler);

  // 1. every acknowledged event stored exactly once, nothing else
  const rowsOut = (await run('sqlite3', [`${tmp}/events.db`, 'SELECT uuid FROM events'], { maxBuffer: 1 << 28 })).stdout.trim().split('\n').filter(Boolean);
  const storedSet = new Set(rowsOut);
  let missing = 0;
  for (const u of acked) if (!storedSet.has(u)) missing++;
  const strangers = rowsOut.filter((u) => !sent.has(u)).length;
  const duplicates = rowsOut.length - storedSet.size;
  log(`events: ${sent.size} sent, ${acked.size} acknowledged, ${rowsOut.length} stored (${storedSet.size} distinct), ${missing} acknowledged but missing, ${duplicates} duplicates, ${strangers} never sent; client errors ${clientErrors}`);
  if (missing) fail(`${missing} acknowledged events are not in the store`);
  if (duplicates) fail(`${duplicates} events stored twice`);
  if (strangers) fail(`${strangers} stored events were never sent`);
  if (acked.size < sent.size * 0.5) fail(`only ${acked.size} of ${sent.size} events were acknowledged`);

  // 2. every flag's last state reached the fleet
  let stale = [];
  for (let attempt = 0; attempt < 30; attempt++) {
    stale = [];
    const r = await fetch(`http://127.0.0.1:${services.flags.FLAGS_PORT}/flags/?v=2`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: boot.project_api_token, distinct_id: 'soak-check' }) }).catch(() => null);
    const got = r && r.status === 200 ? (await r.json()).flags : {};
    for (const [fk, f] of flags) if ((got[fk]?.enabled ?? null) !== (f.rollout === 100)) stale.push(fk);
    if (!stale.length) break;
    await sleep(1000);
  }
  log(`flags: ${flags.size} made, ${flagErrors} writes refused during faults, ${stale.length} not as last set at the fleet`);
  if (stale.length) fail(`flags not as last set: ${stale.join(', ')}`);

  // 3. RSS: no incarnation that lived long grew without bound
  for (const [name, p] of Object.entries(procs)) {
    for (const inc of p.incarnations) {
      if (inc.rss.length < 6) continue;
      const third = Math.floor(inc.rss.length / 3);
      const early = Math.max(...inc.rss.slice(0, third).map((x) => x[1]));
      const late = Math.max(...inc.rss.slice(-third).map((x) => x[1]));
      log(`rss ${name} pid ${inc.pid}: ${(early / 1024).toFixed(1)} MB early, ${(late / 1024).toFixed(1)} MB late (${inc.rss.length} samples)`);
      if (late > early * 2 + 32 * 1024) fail(`${name}'s RSS grew from ${early} to ${late} kB`);
    }
  }
  log(`kills: ${Object.entries(kills).map(([n, c]) => `${n} ${c}`).join(', ')}`);

  for (const p of Object.values(procs)) await p.srv?.stop();
  await edge.stop();
  await redis.stop();
  if (!failures) fs.rmSync(tmp, { recursive: true, force: true });
  log(failures ? `${failures} check(s) failed` : "every check held");
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
