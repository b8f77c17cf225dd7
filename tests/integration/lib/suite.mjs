// suite.mjs - the whole path a writer test needs, for one pair of backends:
//   {queue: 'redis' | 'kafka', store: 'sqlite' | 'clickhouse', persons: 'sqlite' | 'postgres'}
// Redis (always: tokens and the person copies), the Kafka test broker when
// the queue is Kafka, the event store (lib/evstore.mjs), PostgreSQL for the
// persons store when asked, the api (bootstrapped: a project and a personal
// key), ingest and the writer. Every process is stopped by stop().
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './proc.mjs';
import { startRedis, redisCommand } from './redis.mjs';
import { startPostgres } from './postgres.mjs';
import { openStore } from './evstore.mjs';
import { within } from './rawhttp.mjs';

const run = promisify(execFile);
const BIN = (s) => path.join(BUILD, 'bin', s);
const SUPPORT = (s) => path.join(BUILD, 'tests/support', s);
export const MAIN = 'events_plugin_ingestion';
export const HISTORICAL = 'events_plugin_ingestion_historical';
export const DEAD = 'events_plugin_ingestion_dlq';

// The pairs the issue asks for: what `make run` uses, and what deployments use.
// TEST_PAIRS=kafka (or redis) narrows a run to one pair when chasing a
// problem; `make test` runs both.
export const PAIRS = [
  { queue: 'redis', store: 'sqlite', persons: 'sqlite' },
  { queue: 'kafka', store: 'clickhouse', persons: 'postgres' },
].filter((p) => !process.env.TEST_PAIRS || process.env.TEST_PAIRS.split(',').includes(p.queue));
export const pairName = (p) => `${p.queue} + ${p.store}, persons on ${p.persons}`;

export async function startPair(pair, opts = {}) {
  const s = { pair, tmp: fs.mkdtempSync(path.join(os.tmpdir(), 'cm-suite-')) };
  try {
    await start(s, opts);
  } catch (e) {
    // What did start is stopped here: a test whose before() failed never
    // has it to stop, and its children would keep node from exiting.
    await stopAll(s).catch(() => {});
    throw e;
  }
  return s;
}

async function stopAll(s) {
  for (const p of [s.writer, s.ingest, s.flags, s.api]) await p?.stop();
  await s.broker?.stop();
  await s.redis?.stop();
  await s.store?.stop();
  s.pg?.stop();
  fs.rmSync(s.tmp, { recursive: true, force: true });
}

// store: an event store the caller started and stops ({env, stop}), in
// place of pair.store's (clickhouse_cluster.test.mjs: the cluster).
async function start(s, { writer: writerOpts = {}, flags = false, ingestEnv = {}, apiEnv: apiExtra = {}, flagsEnv = {}, partitions = 4, store = null }) {
  const pair = s.pair;
  s.redis = await startRedis();
  if (pair.queue === 'kafka') {
    // librdkafka's mock broker keeps at most 5 MiB of messages a partition
    // and drops the oldest beyond that, read or not (a fixed retention): a
    // test that queues more than that for a lagging consumer needs more
    // partitions (see writer_durability.test.mjs).
    s.broker = await startServer(SUPPORT('kafka_broker'), { TOPICS: `${MAIN},${HISTORICAL},${DEAD}`, PARTITIONS: String(partitions) });
    s.brokers = `127.0.0.1:${s.broker.port}`;
  }
  s.store = store ?? await openStore(pair.store, s.tmp);
  let personsUrl = `sqlite:${s.tmp}/persons.db`;
  if (pair.persons === 'postgres') {
    s.pg = startPostgres();
    personsUrl = s.pg.database('persons');
  }
  const queueEnv = s.brokers ? { KAFKA_BROKERS: s.brokers } : {};
  const apiEnv = { API_PORT: '0', REDIS_URL: s.redis.url, DATABASE_URL: `sqlite:${s.tmp}/meta.db`, LOG_LEVEL: 'warn', ...s.store.env, ...apiExtra };
  s.boot = JSON.parse((await run(BIN('api'), ['bootstrap'], { env: { ...process.env, ...apiEnv } })).stdout);
  s.apiEnv = apiEnv; // a second api on the same metadata (clickhouse_cluster_materialized)
  s.api = await startServer(BIN('api'), apiEnv, { ready: true });
  // Generous: the sanitizer tree on a loaded 2-core machine.
  try {
    await within(15000, 'the api published the token', async () => (await redisCommand(s.redis.port, 'HGET', 'projects:tokens', s.boot.project_api_token)) === String(s.boot.project_id));
  } catch (e) {
    e.message += `; the api said: ${s.api.stderr().slice(-12000)}`;
    throw e;
  }
  s.ingest = await startServer(BIN('ingest'), { INGEST_PORT: '0', REDIS_URL: s.redis.url, LOG_LEVEL: 'warn', ...queueEnv, ...ingestEnv });
  if (flags) s.flags = await startServer(BIN('flags'), { FLAGS_PORT: '0', REDIS_URL: s.redis.url, LOG_LEVEL: 'warn', ...flagsEnv });
  s.writerEnv = {
    WRITER_PORT: '0', REDIS_URL: s.redis.url, LOG_LEVEL: 'warn', PERSONS_DATABASE_URL: personsUrl,
    // Kafka: rejoining after a kill in a second, not librdkafka's 45 s.
    KAFKA_CONSUMER_PROPERTIES: 'session.timeout.ms=6000,heartbeat.interval.ms=500',
    ...queueEnv, ...s.store.env, ...writerOpts,
  };
  s.writer = await startServer(BIN('writer'), s.writerEnv);
  s.ingestUrl = `http://127.0.0.1:${s.ingest.port}`;
  s.writerUrl = `http://127.0.0.1:${s.writer.port}`;

  s.get = async (p) => {
    const r = await fetch(`http://127.0.0.1:${s.api.port}${p}`, { headers: { Authorization: `Bearer ${s.boot.personal_api_key}` } });
    return { status: r.status, json: await r.json() };
  };
  // Any api call with the bootstrap key: {status, json, headers}.
  s.call = async (method, p, body, headers = {}) => {
    const r = await fetch(`http://127.0.0.1:${s.api.port}${p}`, {
      method,
      headers: { Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = { text }; }
    return { status: r.status, json, headers: r.headers };
  };
  s.apiUrl = `http://127.0.0.1:${s.api.port}`;
  s.metric = async (name) => {
    const text = await (await fetch(`http://127.0.0.1:${s.writer.port}/metrics`)).text();
    const m = text.match(new RegExp(`^${name} (\\d+)$`, 'm'));
    return m ? Number(m[1]) : 0;
  };
  // Another writer process in place of the current one (signal: how the old one ends).
  s.restartWriter = async (signal = 'SIGKILL') => {
    s.writer.child.kill(signal);
    await s.writer.exited;
    s.writer = await startServer(BIN('writer'), s.writerEnv);
    s.writerUrl = `http://127.0.0.1:${s.writer.port}`;
  };
  // A message no ingest would write, straight onto the main topic / stream.
  s.raw = async (value) => {
    if (!s.brokers) return redisCommand(s.redis.port, 'XADD', MAIN, '*', 'key', '', 'value', value);
    await new Promise((resolve, reject) => {
      const p = spawn(SUPPORT('kafka_produce'), [], { env: { ...process.env, BOOTSTRAP: s.brokers, TOPIC: MAIN }, stdio: ['pipe', 'ignore', 'inherit'] });
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kafka_produce exited ${code}`))));
      p.stdin.end(JSON.stringify({ key: null, value }) + '\n');
    });
  };
  // The dead letters: [{headers: {...}, value}].
  s.deadLetters = async () => {
    if (s.brokers) {
      const { stdout } = await run(SUPPORT('kafka_dump'), [], { env: { ...process.env, BOOTSTRAP: s.brokers, TOPICS: DEAD, IDLE_MS: '700' }, maxBuffer: 1 << 28 });
      return stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    }
    const entries = (await redisCommand(s.redis.port, 'XRANGE', DEAD, '-', '+')) || [];
    return entries.map(([, f]) => {
      const m = { headers: {} };
      for (let i = 0; i < f.length; i += 2) {
        if (f[i] === 'value') m.value = f[i + 1];
        else if (f[i].startsWith('h:')) m.headers[f[i].slice(2)] = f[i + 1];
      }
      return m;
    });
  };
  // For a failure's message: of the uuids sent but not stored, how many
  // are on the queue, and where (Kafka: partition and offset ranges).
  s.whereAre = async (sent, stored) => {
    const have = new Set(stored);
    const missing = new Set(sent.filter((u) => !have.has(u)));
    if (!s.brokers) {
      const entries = (await redisCommand(s.redis.port, 'XRANGE', MAIN, '-', '+')) || [];
      const pending = await redisCommand(s.redis.port, 'XPENDING', MAIN, 'writer');
      const on = entries.filter(([, f]) => missing.has(JSON.parse(f[f.indexOf('value') + 1]).uuid)).length;
      return `${missing.size} missing, ${on} still on the stream, pending ${JSON.stringify(pending)}`;
    }
    const { stdout } = await run(SUPPORT('kafka_dump'), [], { env: { ...process.env, BOOTSTRAP: s.brokers, TOPICS: MAIN, IDLE_MS: '1500' }, maxBuffer: 1 << 28 });
    const where = {};
    let on = 0, read = 0;
    const seen = new Set();
    const perPartition = {};
    let twice = 0;
    for (const line of stdout.split('\n').filter(Boolean)) {
      const m = JSON.parse(line);
      read++;
      perPartition[m.partition] = (perPartition[m.partition] ?? 0) + 1;
      if (seen.has(m.headers.uuid)) twice++;
      seen.add(m.headers.uuid);
      if (!missing.has(m.headers.uuid)) continue;
      on++;
      const w = (where[m.partition] ??= { min: m.offset, max: m.offset, n: 0 });
      w.min = Math.min(w.min, m.offset);
      w.max = Math.max(w.max, m.offset);
      w.n++;
    }
    let committed = '';
    try {
      committed = (await run(SUPPORT('kafka_dump'), [], { env: { ...process.env, BOOTSTRAP: s.brokers, TOPICS: `${MAIN},${HISTORICAL}`, GROUP: 'writer' } })).stdout.trim();
    } catch (e) {
      committed = `(committed offsets unreadable: ${e.message})`;
    }
    return `${missing.size} missing, ${on} on the topic at ${JSON.stringify(where)} (the dump read ${read} messages, ${JSON.stringify(perPartition)} by partition, ${twice} of them a uuid seen before; fewer than a partition's end offset: the mock broker dropped its oldest, past 5 MiB); group ${committed}; metrics: ${(await (await fetch(`http://127.0.0.1:${s.writer.port}/metrics`)).text()).split('\n').filter((l) => /^(queue_consumer|writer_batch)/.test(l)).join(' ')}`;
  };
  s.stop = () => stopAll(s);
}
