// make_run.test.mjs - scripts/run (what `make run` starts) says what is true:
// "The suite is running" only once every service answers /_ready; a second
// run, a taken port, another Redis on the Redis port and a service that fails
// to start or exits later are each named, with a non-zero exit, and what was
// started is stopped.
//
// Every run gets its own var/ directory and free ports (environment
// variables), so two test runs never collide. Whatever scripts/run started is
// listed in its run.pids; the test kills those PIDs itself at the end, so a
// failing assertion leaves nothing running.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';

const BUILD = process.env.CM_BUILD || 'build';
const NAMES = ['EDGE_PORT', 'API_PORT', 'INGEST_PORT', 'FLAGS_PORT', 'WRITER_PORT', 'REDIS_PORT'];
const runs = [];

// Six distinct ports nothing listens on now, below the ephemeral range.
async function freePorts() {
  const ports = new Set();
  while (ports.size < NAMES.length) {
    const p = 12000 + Math.floor(Math.random() * 20000);
    if (!ports.has(p) && await isFree(p)) ports.add(p);
  }
  return Object.fromEntries([...ports].map((p, i) => [NAMES[i], String(p)]));
}
function isFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

// Starts scripts/run on its own var/ dir; the environment is built here
// (no REDIS_URL, KAFKA_BROKERS or DATABASE_URL of the caller's).
function startRun(ports, extra = {}, varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-run-'))) {
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, CM_BUILD: BUILD, VAR_DIR: varDir,
    RUN_READY_TIMEOUT: '60', ...ports, ...extra,
  };
  for (const k of ['ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) {
    if (process.env[k]) env[k] = process.env[k];
  }
  const child = spawn(path.join(ROOT, 'scripts', 'run'), [], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, varDir, ports, out: '', err: '', pids: new Set() };
  child.stdout.on('data', (d) => { run.out += d; });
  child.stderr.on('data', (d) => { run.err += d; });
  run.exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  runs.push(run);
  return run;
}

// run.pids as { name: pid }; remembered for the final clean-up.
function pidsOf(run) {
  const file = path.join(run.varDir, 'run.pids');
  const map = {};
  if (!fs.existsSync(file)) return map;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [name, pid] = line.split(' ');
    if (name && pid) { map[name] = Number(pid); run.pids.add(Number(pid)); }
  }
  return map;
}
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

async function until(what, cond, ms = 90000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// Waits for "The suite is running" (or the run's end) and returns the PIDs.
async function whenRunning(run) {
  let ended = false;
  run.exited.then(() => { ended = true; });
  await until('the suite to run', () => ended || run.out.includes('The suite is running'));
  assert.ok(!ended, `scripts/run ended before running: ${run.err}`);
  return pidsOf(run);
}

async function getStatus(port, route) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${route}`);
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

after(async () => {
  for (const run of runs) {
    pidsOf(run);
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    for (const pid of run.pids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    fs.rmSync(run.varDir, { recursive: true, force: true });
  }
});

test('running: every service ready when announced; a second run refused; a service that exits is named', async () => {
  const ports = await freePorts();
  const run = startRun(ports);
  const pids = await whenRunning(run);
  // Announced only after /_ready: every listed service answers now, edge included.
  for (const name of ['EDGE_PORT', 'API_PORT', 'INGEST_PORT', 'FLAGS_PORT', 'WRITER_PORT']) {
    assert.equal(await getStatus(ports[name], '/_ready'), 200, `${name} ready`);
    assert.ok(run.out.includes(`http://127.0.0.1:${ports[name]}`), `${name} listed`);
  }
  for (const name of ['redis', 'ingest', 'flags', 'api', 'writer', 'edge']) assert.ok(alive(pids[name]), name);

  // A second run on the same var/ while this one runs.
  const second = startRun(ports, {}, run.varDir);
  const { code } = await second.exited;
  assert.equal(code, 1);
  assert.match(second.err, new RegExp(`already running.*pid ${run.child.pid}`));
  assert.ok(!second.out.includes('The suite is running'));
  assert.equal(await getStatus(ports.API_PORT, '/_ready'), 200, 'the first run is untouched');

  // A second run on another var/ with the same ports: each taken port named.
  const third = startRun(ports);
  assert.equal((await third.exited).code, 1);
  assert.match(third.err, new RegExp(`port ${ports.API_PORT} \\(api, API_PORT\\) is taken by api \\(pid ${pids.api}\\)`));
  assert.match(third.err, new RegExp(`port ${ports.REDIS_PORT} \\(redis, REDIS_PORT\\) is taken by redis-server`));
  assert.deepEqual(pidsOf(third), {}, 'the refused run started nothing');

  // A service ending while the suite runs: named, the rest stopped, exit 1.
  process.kill(pids.flags, 'SIGKILL');
  const end = await run.exited;
  assert.equal(end.code, 1);
  assert.match(run.err, /make run: flags exited with status 137; the last lines of .*flags\.log/);
  for (const [name, pid] of Object.entries(pids)) assert.ok(!alive(pid), `${name} (pid ${pid}) stopped`);
  assert.equal(await getStatus(ports.EDGE_PORT, '/_health'), 0);
});

test('Ctrl-C (SIGTERM) stops everything and exits 0', async () => {
  const run = startRun(await freePorts());
  const pids = await whenRunning(run);
  run.child.kill('SIGTERM');
  const end = await run.exited;
  assert.equal(end.code, 0, run.err);
  for (const [name, pid] of Object.entries(pids)) assert.ok(!alive(pid), `${name} (pid ${pid}) stopped`);
});

test('a port taken by another process is named and nothing starts', async () => {
  const ports = await freePorts();
  const blocker = net.createServer().listen(Number(ports.FLAGS_PORT), '127.0.0.1');
  await new Promise((r) => blocker.once('listening', r));
  try {
    const run = startRun(ports);
    assert.equal((await run.exited).code, 1);
    assert.match(run.err, new RegExp(`port ${ports.FLAGS_PORT} \\(flags, FLAGS_PORT\\) is taken by node \\(pid ${process.pid}\\)`));
    assert.match(run.err, /nothing started/);
    assert.ok(!run.out.includes('The suite is running'));
    assert.deepEqual(pidsOf(run), {});
  } finally {
    blocker.close();
  }
});

test('another Redis on the Redis port is named and refused', async () => {
  const redis = await startRedis();
  try {
    const ports = { ...(await freePorts()), REDIS_PORT: String(redis.port) };
    const run = startRun(ports);
    assert.equal((await run.exited).code, 1);
    assert.match(run.err, new RegExp(`port ${redis.port} \\(redis, REDIS_PORT\\) is taken by redis-server \\(pid ${redis.child.pid}\\); another Redis`));
    assert.deepEqual(pidsOf(run), {});
  } finally {
    await redis.stop();
  }
});

test('a service that cannot start is named with its log, the rest stopped, exit 1', async () => {
  const ports = await freePorts();
  const run = startRun(ports, { WRITER_MAX_BODY: 'lots' });
  let seen = {};
  const poll = setInterval(() => { seen = { ...seen, ...pidsOf(run) }; }, 20);
  const end = await run.exited;
  clearInterval(poll);
  seen = { ...seen, ...pidsOf(run) };
  assert.equal(end.code, 1);
  assert.match(run.err, /make run: writer exited with status 2 while starting; the last lines of .*writer\.log:\n {2}\| .*WRITER_MAX_BODY/);
  assert.ok(!run.out.includes('The suite is running'));
  assert.ok(seen.redis && seen.ingest, 'Redis and the services before the writer had started');
  for (const [name, pid] of Object.entries(seen)) {
    if (name !== 'run') assert.ok(!alive(pid), `${name} (pid ${pid}) stopped`);
  }
});

test('a service that never gets ready is named with its /_ready answer; nothing is announced', async () => {
  const ports = await freePorts();
  // Kafka on a port nothing listens on: ingest starts but is never ready.
  let kafka;
  do kafka = 12000 + Math.floor(Math.random() * 20000); while (Object.values(ports).includes(String(kafka)) || !(await isFree(kafka)));
  const run = startRun(ports, { KAFKA_BROKERS: `127.0.0.1:${kafka}`, RUN_READY_TIMEOUT: '2' });
  let seen = {};
  const poll = setInterval(() => { seen = { ...seen, ...pidsOf(run) }; }, 20);
  const end = await run.exited;
  clearInterval(poll);
  assert.equal(end.code, 1);
  assert.match(run.err, /make run: ingest was not ready within 2s \(its \/_ready: .*not_ready.*\(HTTP 503\)\); the last lines of .*ingest\.log/);
  assert.doesNotMatch(run.err, /"msg":"GET \/_ready -> /, 'its own polling is left out of the log lines');
  assert.ok(!run.out.includes('The suite is running'));
  assert.ok(seen.ingest, 'ingest had started');
  for (const [name, pid] of Object.entries(seen)) {
    if (name !== 'run') assert.ok(!alive(pid), `${name} (pid ${pid}) stopped`);
  }
});
