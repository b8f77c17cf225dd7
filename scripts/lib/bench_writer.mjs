// bench_writer.mjs [N] - the writer's throughput from a pre-filled queue
// into SQLite and into ClickHouse, each beside that store's own ceiling for
// the same rows measured in the same run; capture-to-queryable latency at
// half the measured rate; the writer's peak RSS; per core: the writer's
// events per CPU second (and CPU microseconds per event) beside the store's
// own CPU per row in the ceiling run. Prints one JSON line per store.
//
// Throughput: N CapturedEvent messages (1,000 users, ~20 properties each,
// 1 in 20 an $identify with $set) are put on the Redis stream before the
// writer starts; the clock runs from its {"listening"} line to its
// writer_events_stored_total reaching N.
// Ceiling: the same rows (read back from what the writer stored) inserted
// again into a fresh table of the same schema, in batches of WRITER_BATCH:
// SQLite by its own CLI (INSERT ... SELECT per batch, one transaction each),
// ClickHouse by JSONEachRow POSTs, one after another.
// Latency: ingest's POST /batch/ with 10 events per request at half the
// writer's rate for BENCH_SECONDS; an event is queryable once the writer's
// stored counter passes it (the counter moves after the store's commit).
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, ROOT, startServer } from '../../tests/integration/lib/proc.mjs';
import { startRedis, redisCommand } from '../../tests/integration/lib/redis.mjs';
import { startClickHouse } from '../../tests/integration/lib/clickhouse.mjs';
import { TOKEN, message } from './bench_writer_events.mjs';

const run = promisify(execFile);
const N = Number(process.argv[2] || process.env.BENCH_WRITER_EVENTS || 100000);
const BATCH = Number(process.env.WRITER_BATCH || 1000);
const SECS = Number(process.env.BENCH_SECONDS || 5);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The stream filled through redis-cli --pipe (raw protocol), in one go.
async function prefill(port) {
  const file = path.join(os.tmpdir(), `cm-bench-writer-${process.pid}.resp`);
  const out = fs.openSync(file, 'w');
  const t0 = Date.now() - 3600e3;
  const arg = (s) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
  let chunk = '';
  for (let i = 0; i < N; i++) {
    chunk += `*7\r\n${arg('XADD')}${arg('events_plugin_ingestion')}${arg('*')}${arg('key')}${arg(`${TOKEN}:u`)}${arg('value')}${arg(message(i, t0))}`;
    if (chunk.length > 1 << 20) { fs.writeSync(out, chunk); chunk = ''; }
  }
  fs.writeSync(out, chunk);
  fs.closeSync(out);
  await run('sh', ['-c', `redis-cli -p ${port} --pipe < ${file} > /dev/null`]);
  fs.rmSync(file);
}

// name may carry its labels: writer_person_loads_total{parse="reused"}
async function metric(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = text.match(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}

// CPU seconds (user + system) a process has used so far, from /proc.
const cpuSeconds = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = f.slice(f.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on
  return (Number(after[11]) + Number(after[12])) / CLK_TCK;
};
const CLK_TCK = 100; // USER_HZ: 100 on Linux for every current architecture

const peakRss = (pid) => {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/);
  return m ? Number(m[1]) / 1024 : 0;
};

async function throughput(env, redisPort) {
  await prefill(redisPort);
  const t0 = performance.now();
  const writer = await startServer(path.join(BUILD, 'bin/writer'), { ...env, WRITER_BATCH: String(BATCH) }, { timeoutMs: 30000 });
  while ((await metric(writer.port, 'writer_events_stored_total')) < N) await sleep(20);
  const secs = (performance.now() - t0) / 1000;
  return { writer, rate: N / secs, secs, cpu: cpuSeconds(writer.pid) };
}

async function latency(writer, ingestPort, rate) {
  const perReq = 10;
  const reqs = Math.max(1, Math.floor((rate / 2) * SECS / perReq));
  const gap = (SECS * 1000) / reqs;
  const sent = [];
  const base = await metric(writer.port, 'writer_events_stored_total');
  const lat = [];
  let seen = 0;
  let polling = true;
  const poller = (async () => {
    while (polling || seen < sent.length) {
      const stored = (await metric(writer.port, 'writer_events_stored_total')) - base;
      const now = performance.now();
      while (seen < sent.length && stored >= (seen + 1) * perReq) lat.push(now - sent[seen++]);
      await sleep(2);
    }
  })();
  const start = performance.now();
  for (let i = 0; i < reqs; i++) {
    const due = start + i * gap;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const batch = [];
    for (let k = 0; k < perReq; k++) batch.push({ event: 'latency probe', distinct_id: `lat-${k}`, properties: { i, k } });
    sent.push(performance.now());
    const r = await fetch(`http://127.0.0.1:${ingestPort}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: TOKEN, batch }) });
    if (r.status !== 200) throw new Error(`ingest answered ${r.status}`);
  }
  polling = false;
  await poller;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return { p50: q(0.5), p99: q(0.99), rate_sent: (reqs * perReq) / SECS };
}

// Runs the script in sqlite3; resolves with the CPU seconds sqlite3 used
// (bash's `times`: its children's user and system time).
function sqliteScript(db, script) {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-c', 'sqlite3 "$1" > /dev/null || exit $?; times', 'bash', db], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`sqlite3 exited ${code}`));
      const t = [...(out.trim().split('\n')[1] || '').matchAll(/(\d+)m([\d.]+)s/g)];
      resolve(t.reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0));
    });
    p.stdin.end(script);
  });
}

async function sqliteCeiling(dir) {
  const src = path.join(dir, 'events.db');
  const dst = path.join(dir, 'ceiling.db');
  const ddl = fs.readFileSync(path.join(ROOT, 'proto/event_store/sqlite.sql'), 'utf8');
  await sqliteScript(dst, `PRAGMA journal_mode=WAL;\n${ddl}`);
  const { stdout } = await run('sqlite3', [src, 'SELECT MIN(rowid), MAX(rowid) FROM events']);
  const [lo, hi] = stdout.trim().split('|').map(Number);
  let script = `PRAGMA journal_mode=WAL;\nPRAGMA synchronous=NORMAL;\nATTACH '${src}' AS src;\n`;
  for (let a = lo; a <= hi; a += BATCH) {
    script += `BEGIN IMMEDIATE;\nINSERT INTO events SELECT * FROM src.events WHERE rowid >= ${a} AND rowid < ${a + BATCH};\nCOMMIT;\n`;
  }
  const t0 = performance.now();
  const cpu = await sqliteScript(dst, script);
  const rows = hi - lo + 1;
  return { rate: rows / ((performance.now() - t0) / 1000), cpuPerRow: cpu / rows };
}

async function clickhouseCeiling(ch) {
  const ddl = fs.readFileSync(path.join(ROOT, 'proto/event_store/clickhouse.sql'), 'utf8')
    .split('\n').filter((l) => !l.trim().startsWith('--')).join('\n').split(';')[0]
    .replace('CREATE TABLE IF NOT EXISTS events', 'CREATE TABLE events_ceiling');
  await ch.query(ddl);
  const lines = (await ch.query('SELECT * FROM events FORMAT JSONEachRow')).split('\n').filter(Boolean);
  const cpu0 = cpuSeconds(ch.pid);
  const t0 = performance.now();
  for (let i = 0; i < lines.length; i += BATCH) {
    await ch.query('INSERT INTO events_ceiling FORMAT JSONEachRow', {
      body: lines.slice(i, i + BATCH).join('\n') + '\n',
      settings: { date_time_input_format: 'best_effort', input_format_skip_unknown_fields: 1 },
    });
  }
  const secs = (performance.now() - t0) / 1000;
  return { rate: lines.length / secs, cpuPerRow: (cpuSeconds(ch.pid) - cpu0) / lines.length };
}

for (const kind of (process.env.BENCH_WRITER_STORES || 'sqlite,clickhouse').split(',')) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-writer-'));
  const redis = await startRedis();
  const ch = kind === 'clickhouse' ? await startClickHouse() : null;
  await redisCommand(redis.port, 'HSET', 'projects:tokens', TOKEN, '1');
  const env = {
    WRITER_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'error', PERSONS_DATABASE_URL: `sqlite:${dir}/persons.db`,
    ...(ch ? { CLICKHOUSE_URL: ch.url } : { EVENTS_DB: path.join(dir, 'events.db') }),
  };
  try {
    const chCpu0 = ch ? cpuSeconds(ch.pid) : 0;
    const { writer, rate, cpu } = await throughput(env, redis.port);
    const rss = peakRss(writer.pid);
    // stored persons found parsed from an earlier batch, of all loaded
    const reused = await metric(writer.port, 'writer_person_loads_total{parse="reused"}');
    const parsed = await metric(writer.port, 'writer_person_loads_total{parse="parsed"}');
    const chCpu = ch ? cpuSeconds(ch.pid) - chCpu0 : 0; // ClickHouse's CPU while the writer filled it
    const { rate: ceiling, cpuPerRow } = ch ? await clickhouseCeiling(ch) : await sqliteCeiling(dir);
    const ingest = await startServer(path.join(BUILD, 'bin/ingest'), { INGEST_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'error' });
    const lat = await latency(writer, ingest.port, rate);
    const rssAfter = peakRss(writer.pid);
    await ingest.stop();
    await writer.stop();
    console.log(JSON.stringify({
      store: kind, events: N, batch: BATCH, events_per_s: Math.round(rate), store_ceiling_rows_per_s: Math.round(ceiling),
      ratio: Number((rate / ceiling).toFixed(2)),
      // per core: events per second of the writer's own CPU (all its threads,
      // SQLite's included when it is the store), beside the store's own CPU
      // per row in the ceiling run (sqlite3, or the ClickHouse server)
      writer_events_per_cpu_s: Math.round(N / cpu), writer_cpu_us_per_event: Number((cpu / N * 1e6).toFixed(1)),
      store_cpu_us_per_row: Number((cpuPerRow * 1e6).toFixed(1)),
      ...(ch ? { clickhouse_cpu_us_per_event_from_writer: Number((chCpu / N * 1e6).toFixed(1)) } : {}),
      latency_ms_p50: Number(lat.p50.toFixed(1)),
      latency_ms_p99: Number(lat.p99.toFixed(1)), latency_load_events_per_s: Math.round(lat.rate_sent),
      peak_rss_mb: Number(Math.max(rss, rssAfter).toFixed(1)),
      person_loads_reused: reused + parsed ? Number((reused / (reused + parsed)).toFixed(2)) : 0,
    }));
  } finally {
    await redis.stop();
    await ch?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
