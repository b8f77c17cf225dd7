// start_stop_lines.test.mjs - what a service says when it starts and
// stops, and the order `make run` (scripts/run) stops things in.
//   - The start line on stdout is a log line like the others (ts, level,
//     service, address), with "listening" first for whoever waits for it.
//   - Each schema migration names its store: the api migrates two (its
//     metadata and the events), whose "migration 1" lines were alike.
//   - A drained service ends with a "stopped" line.
//   - scripts/run stops the edge and the services before the Redis they
//     drain into: every service's "stopped" line is written before Redis
//     is asked to shut down.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BUILD, ROOT, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { freePort } from './lib/oauth.mjs';

const lines = (text) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

describe('start and stop lines', () => {
  let redis, tmp;
  before(async () => {
    redis = await startRedis();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-lines-'));
  });
  after(async () => {
    await redis?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the api: a structured start line, migrations named by store, a stopped line', async () => {
    const api = await startServer(path.join(BUILD, 'bin/api'), {
      API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'info',
    }, { ready: true });
    let out = '';
    api.child.stdout.on('data', (d) => { out += d; });
    await api.stop();
    const err = lines(api.stderr());
    const migrations = err.filter((l) => /schema migration/.test(l.msg));
    const stores = new Set(migrations.map((l) => l.store));
    assert.deepEqual([...stores].sort(), ['events', 'store'], JSON.stringify(migrations));
    for (const l of migrations) {
      assert.equal(l.msg, `${l.store}: schema migration ${l.migration} applied`);
      assert.equal(l.service, 'api');
    }
    assert.equal(err.at(-1).msg, 'stopped');
    assert.equal(out, ''); // stdout holds the start line only (startServer read it)
  });

  test('the start line: listening first, then the log line fields', async () => {
    const child = spawn(path.join(BUILD, 'bin/flags'), [], {
      env: { ...process.env, FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const first = await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => { out += d; if (out.includes('\n')) resolve(out.split('\n')[0]); });
      child.on('exit', (code) => reject(new Error(`flags exited ${code}`)));
    });
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exited;
    assert.match(first, /^\{"listening":\d+,/);
    const l = JSON.parse(first);
    assert.equal(l.service, 'flags');
    assert.equal(l.address, `127.0.0.1:${l.listening}`);
    assert.equal(l.level, 'info');
    assert.equal(l.msg, 'listening');
    assert.ok(!Number.isNaN(Date.parse(l.ts)), l.ts);
  });

  test('scripts/run stops the services before Redis', { timeout: 120000 }, async () => {
    const varDir = path.join(tmp, 'var');
    const ports = {};
    for (const k of ['EDGE_PORT', 'API_PORT', 'INGEST_PORT', 'FLAGS_PORT', 'WRITER_PORT', 'REDIS_PORT']) ports[k] = String(await freePort());
    // DRAIN_TIMEOUT: how long a service waits on SIGTERM for a request in
    // progress; the test holds one open at ingest, so ingest stops a second
    // after its SIGTERM, long after a Redis stopped at the same time would.
    const env = { ...process.env, ...ports, VAR_DIR: varDir, TZ: 'UTC', DRAIN_TIMEOUT: '1s' };
    for (const k of ['KAFKA_BROKERS', 'CLICKHOUSE_URL', 'REDIS_URL', 'DATABASE_URL', 'EVENTS_DB', 'PERSONS_DATABASE_URL']) delete env[k];
    const run = spawn(path.join(ROOT, 'scripts/run'), [], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    run.stdout.on('data', (d) => { said += d; });
    run.stderr.on('data', (d) => { said += d; });
    const exited = new Promise((r) => run.on('exit', (code) => r(code)));
    try {
      await new Promise((resolve, reject) => {
        const t = setInterval(() => { if (said.includes('The suite is running')) { clearInterval(t); resolve(); } }, 50);
        exited.then((code) => { clearInterval(t); reject(new Error(`scripts/run exited ${code}: ${said}`)); });
      });
      // a capture whose body never finishes: a request in progress
      const held = net.connect({ host: '127.0.0.1', port: Number(ports.INGEST_PORT) });
      await new Promise((r, j) => { held.on('connect', r); held.on('error', j); });
      held.on('error', () => {});
      held.write('POST /capture/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      run.kill('SIGINT');
      await exited;
    }
    // Redis's own clock in its log: "pid:M 28 Nov 2026 13:38:55.123 # ..."
    const redisLog = fs.readFileSync(path.join(varDir, 'log/redis.log'), 'utf8');
    const m = redisLog.match(/(\d+ \w{3} \d{4} \d\d:\d\d:\d\d\.\d{3}) # (?:Received SIGTERM|User requested shutdown)/);
    assert.ok(m, redisLog);
    const redisStop = Date.parse(`${m[1]} UTC`);
    for (const svc of ['ingest', 'flags', 'api', 'writer']) {
      const log = lines(fs.readFileSync(path.join(varDir, `log/${svc}.log`), 'utf8'));
      const start = log.find((l) => 'listening' in l);
      assert.equal(start?.service, svc, `${svc}: ${JSON.stringify(log.slice(0, 3))}`);
      const stopped = log.findLast((l) => l.msg === 'stopped');
      assert.ok(stopped, `${svc} has no stopped line: ${JSON.stringify(log.slice(-3))}`);
      assert.ok(Date.parse(stopped.ts) <= redisStop, `${svc} stopped at ${stopped.ts}, after Redis was asked to at ${m[1]}`);
    }
  });
});
