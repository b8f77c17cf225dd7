// bench_writer_scale.mjs [N] - does adding writers add throughput? One,
// two and four writer processes in one consumer group on a Kafka topic of
// 16 partitions (librdkafka's mock broker, tests/support/kafka_broker),
// events into ClickHouse, persons into PostgreSQL (the multi-writer
// deployment of docs/writer.md). Prints one JSON line per writer count.
//
// Each run: a fresh broker, ClickHouse database and PostgreSQL database;
// N CapturedEvent messages (bench_writer_events.mjs, keyed by token and
// distinct id as ingest keys them) on the topic before any writer starts;
// then the writers start together. Reported:
//   events_per_s         N / (start of the writers -> all N stored), the
//                        group's joins and first rebalances included;
//   steady_events_per_s  from the moment every member holds partitions
//                        (queue_consumer_assigned_partitions summing to 16)
//                        to the last event stored, the joins left out;
//   writer_cpu_s         each writer's CPU seconds (utime + stime from
//                        /proc/<pid>/stat) over the run;
//   events_per_writer_cpu_s  N / the writers' CPU seconds together: flat
//                        across counts means a writer does the same work per
//                        event whatever the number of writers;
//   clickhouse_cpu_s     the ClickHouse server's CPU seconds over the run
//                        (it shares the machine's cores).
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { BUILD, startServer } from '../../tests/integration/lib/proc.mjs';
import { startRedis, redisCommand } from '../../tests/integration/lib/redis.mjs';
import { startClickHouse } from '../../tests/integration/lib/clickhouse.mjs';
import { startPostgres } from '../../tests/integration/lib/postgres.mjs';
import { TOKEN, message } from './bench_writer_events.mjs';

const run = promisify(execFile);
// The mock broker keeps at most 5 MiB a partition (docs/writer.md): 40,000
// messages of ~1 kB over 16 partitions stay well under it.
const N = Number(process.argv[2] || process.env.BENCH_WRITER_SCALE_EVENTS || 40000);
const COUNTS = (process.env.BENCH_WRITER_COUNTS || '1,2,4').split(',').map(Number);
const PARTITIONS = 16;
const BATCH = Number(process.env.WRITER_BATCH || 1000);
const LIMIT_MS = Number(process.env.BENCH_WRITER_SCALE_LIMIT_MS || 300e3);
const MAIN = 'events_plugin_ingestion';
const SUPPORT = (s) => path.join(BUILD, 'tests/support', s);
const TICK = Number(await run('getconf', ['CLK_TCK']).then((r) => r.stdout.trim()));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// utime + stime of a live process, in seconds.
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
  return (Number(f[11]) + Number(f[12])) / TICK;
}

async function metrics(port) {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}
const gauge = (text, re) => { const m = text.match(re); return m ? Number(m[1]) : 0; };
const storedRe = /^writer_events_stored_total (\d+)$/m;
const assignedRe = new RegExp(`^queue_consumer_assigned_partitions\\{topic="${MAIN}"\\} (\\d+)$`, 'm');

function produce(brokers) {
  return new Promise((resolve, reject) => {
    const p = spawn(SUPPORT('kafka_produce'), [], { env: { ...process.env, BOOTSTRAP: brokers, TOPIC: MAIN }, stdio: ['pipe', 'ignore', 'inherit'] });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kafka_produce exited ${code}`))));
    const t0 = Date.now() - 3600e3;
    let chunk = '';
    for (let i = 0; i < N; i++) {
      chunk += JSON.stringify({ key: `${TOKEN}:user-${i % 1000}`, value: message(i, t0) }) + '\n';
      if (chunk.length > 1 << 20) { p.stdin.write(chunk); chunk = ''; }
    }
    p.stdin.end(chunk);
  });
}

async function once(k, { redis, ch, pg }) {
  const broker = await startServer(SUPPORT('kafka_broker'), {
    TOPICS: `${MAIN},${MAIN}_historical,${MAIN}_dlq`, PARTITIONS: String(PARTITIONS),
  });
  const brokers = `127.0.0.1:${broker.port}`;
  const writers = [];
  try {
    await produce(brokers);
    await ch.query(`CREATE DATABASE scale${k}`);
    const env = {
      WRITER_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: process.env.WRITER_LOG || 'warn', KAFKA_BROKERS: brokers,
      KAFKA_CONSUMER_PROPERTIES: 'session.timeout.ms=6000,heartbeat.interval.ms=500',
      CLICKHOUSE_URL: `${ch.url}/?database=scale${k}`, PERSONS_DATABASE_URL: pg.database(`scale${k}`),
      WRITER_BATCH: String(BATCH),
    };
    const chCpu0 = cpuSeconds(ch.pid);
    const t0 = performance.now();
    for (let i = 0; i < k; i++) writers.push(startServer(path.join(BUILD, 'bin/writer'), env, { timeoutMs: 30000 }));
    for (let i = 0; i < k; i++) writers[i] = await writers[i];
    let steadyAt = null, storedAtSteady = 0, stored = 0, last = [];
    while (stored < N) {
      const texts = await Promise.all(writers.map((w) => metrics(w.port)));
      last = texts.map((t) => gauge(t, storedRe));
      stored = last.reduce((a, b) => a + b, 0);
      if (steadyAt === null) {
        const held = texts.map((t) => gauge(t, assignedRe));
        if (held.every((h) => h > 0) && held.reduce((a, b) => a + b, 0) === PARTITIONS) {
          steadyAt = performance.now();
          storedAtSteady = stored;
        }
      }
      if (performance.now() - t0 > LIMIT_MS) {
        throw new Error(`${k} writers: ${last} (${stored} of ${N}) stored in ${LIMIT_MS} ms; their logs: ${writers.map((w) => w.stderr().slice(-3000)).join('\n---\n')}`);
      }
      await sleep(20);
    }
    const t1 = performance.now();
    const cpu = writers.map((w) => cpuSeconds(w.pid));
    const chCpu = cpuSeconds(ch.pid) - chCpu0;
    const total = cpu.reduce((a, b) => a + b, 0);
    const round1 = (x) => Number(x.toFixed(1));
    return {
      writers: k, partitions: PARTITIONS, events: N, batch: BATCH,
      events_per_s: Math.round(N / ((t1 - t0) / 1000)),
      steady_events_per_s: steadyAt === null || t1 <= steadyAt ? null : Math.round((N - storedAtSteady) / ((t1 - steadyAt) / 1000)),
      stored_by_writer: last,
      writer_cpu_s: cpu.map(round1),
      events_per_writer_cpu_s: Math.round(N / total),
      clickhouse_cpu_s: round1(chCpu),
    };
  } finally {
    for (const w of writers) if (w && typeof w.stop === 'function') await w.stop();
    await broker.stop();
  }
}

const redis = await startRedis();
const ch = await startClickHouse();
const pg = startPostgres();
try {
  await redisCommand(redis.port, 'HSET', 'projects:tokens', TOKEN, '1');
  for (const k of COUNTS) console.log(JSON.stringify(await once(k, { redis, ch, pg })));
} finally {
  await redis.stop();
  await ch.stop();
  pg.stop();
}
