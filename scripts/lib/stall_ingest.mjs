// stall_ingest.mjs - scripts/bench stall, ingest part: big /batch/ requests
// (100,000 and 280,000 events, gzip) against ingest on Redis Streams and on
// Kafka (librdkafka's mock cluster as its own process), each beside a
// keep-alive /_health probe every 20 ms (stall_probe.mjs). Prints, per case,
// the request's own time and the probe's worst wait, after the same probe
// against the idle service.
//
// Usage: node scripts/lib/stall_ingest.mjs BUILD_DIR
// STALL_BACKENDS (default "redis,kafka") and STALL_SIZES (default
// "100000,280000") narrow the run, e.g. under a profiler.
// Binds 127.0.0.1 on free ports; stops what it started by PID.
import http from 'node:http';
import zlib from 'node:zlib';
import path from 'node:path';
import { measureStall, idleBaseline, row, post as postProbe } from './stall_probe.mjs';
import { freePort, start } from './procs.mjs';

const BUILD = path.resolve(process.argv[2] || 'build');

async function waitReady(port) {
  for (let i = 0; i < 400; i++) {
    const ok = await new Promise((r) => http.get({ host: '127.0.0.1', port, path: '/_ready' }, (res) => { res.resume(); r(res.statusCode === 200); }).on('error', () => r(false)));
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('ingest never became ready');
}

function batchBody(n) {
  const now = new Date().toISOString();
  const events = new Array(n);
  for (let i = 0; i < n; i++) events[i] = { event: 'stall', distinct_id: `u${i % 1000}`, properties: { i, $lib: 'bench' }, timestamp: now };
  return zlib.gzipSync(JSON.stringify({ api_key: 'phc_stall', batch: events }));
}

function post(port, body) {
  return postProbe(port, '/batch/', { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' }, body);
}

const rport = await freePort();
const redis = await start('redis-server', ['--port', String(rport), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {}, /Ready to accept/);
const broker = await start(path.join(BUILD, 'tests/support/kafka_broker'), [], { TOPICS: 'events_plugin_ingestion', PARTITIONS: '16' }, /"bootstrap":"([^"]+)"/);
const sizes = (process.env.STALL_SIZES || '100000,280000').split(',').map(Number);
const bodies = sizes.map((n) => [n, batchBody(n)]);

console.log('== stall: ingest /batch/ (gzip) beside a keep-alive /_health probe every 20 ms');
for (const backend of (process.env.STALL_BACKENDS || 'redis,kafka').split(',')) {
  const iport = await freePort();
  const env = { INGEST_PORT: String(iport), REDIS_URL: `redis://127.0.0.1:${rport}/0`, STREAM_MAXLEN: '300000', LOG_LEVEL: 'error' };
  if (backend === 'kafka') env.KAFKA_BROKERS = broker.m[1];
  const ingest = await start(path.join(BUILD, 'bin/ingest'), [], env, /listening|"port"/);
  await waitReady(iport);
  console.log(row(`ingest/${backend}: idle (baseline)`, await idleBaseline(iport)));
  for (const [n, body] of bodies) {
    const m = await measureStall(iport, () => post(iport, body));
    if (m.result.status !== 200) console.log(`  (answered ${m.result.status}: ${m.result.text})`);
    console.log(row(`ingest/${backend}: /batch/ ${n} events (${(body.length / 1e6).toFixed(1)} MB gzip)`, m));
  }
  ingest.child.kill('SIGTERM');
  await new Promise((r) => ingest.child.once('exit', r));
}
redis.child.kill('SIGKILL');
broker.child.kill('SIGKILL');
process.exit(0);
