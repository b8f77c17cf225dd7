// observability.test.mjs - what an operator runs the services by
// (docs/operations.md): one access line per request on every service
// (401s, 404s and endpoint runs included, the route's pattern and never
// the raw path), sampling that keeps every error, the materializer's
// start and end lines, the process_* and new series on /metrics, the
// writer's lag and pending against a real backlog (Redis Streams and
// Kafka), and deploy/observability/: the alert rules pass promtool, the
// dashboard has what Grafana needs, and every series either names is one
// the running services expose.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { PAIRS, MAIN, startPair } from './lib/suite.mjs';
import { BUILD, ROOT, startServer } from './lib/proc.mjs';
import { connect, within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const OBS = path.join(ROOT, 'deploy', 'observability');
const INFO = { LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE: '1' };
const pair = PAIRS.find((p) => p.queue === 'redis') ?? PAIRS[0];

// The JSON lines of a process's stderr (anything else is skipped).
const lines = (proc) => proc.stderr().split('\n').flatMap((l) => {
  if (!l.startsWith('{')) return [];
  try { return [JSON.parse(l)]; } catch { return []; }
});
const accessLines = (proc, id) => lines(proc).filter((j) => j.msg === 'access' && j.request_id === id);

// Waits for the one access line of request id, and checks there is one only.
async function accessLine(proc, id) {
  await within(10000, `the access line of ${id}`, async () => accessLines(proc, id).length > 0);
  const found = accessLines(proc, id);
  assert.equal(found.length, 1, JSON.stringify(found));
  return found[0];
}

let counter = 0;
const rid = (what) => `obs-${what}-${process.pid}-${++counter}`;

async function send(url, { method = 'GET', headers = {}, body, id } = {}) {
  const r = await fetch(url, {
    method,
    headers: { 'X-Request-Id': id, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = (await r.arrayBuffer()).byteLength;
  return { status: r.status, bytes };
}

// The fields every access line has, with their types.
function checkCommon(line, { service, method, route, status, bytes }) {
  assert.equal(line.service, service);
  assert.equal(line.level, status >= 500 ? 'warn' : 'info');
  assert.equal(line.method, method);
  assert.equal(line.route, route);
  assert.equal(line.status, status);
  assert.equal(typeof line.duration_ms, 'number');
  assert.ok(line.duration_ms >= 0 && line.duration_ms < 60000, String(line.duration_ms));
  assert.equal(line.bytes_out, bytes);
  assert.equal(line.peer, '127.0.0.1');
  assert.match(line.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

// Prometheus text: {series name -> [{labels, value}]}, and {family -> TYPE}.
function parseMetrics(text) {
  const series = new Map();
  const types = new Map();
  const helps = new Set();
  for (const l of text.split('\n')) {
    let m;
    if ((m = l.match(/^# TYPE (\S+) (\S+)$/))) types.set(m[1], m[2]);
    else if ((m = l.match(/^# HELP (\S+) /))) helps.add(m[1]);
    else if ((m = l.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/))) {
      if (!series.has(m[1])) series.set(m[1], []);
      series.get(m[1]).push({ labels: m[2] ?? '', value: Number(m[3]) });
    }
  }
  return { series, types, helps };
}
const scrape = async (port) => parseMetrics(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
const value = (m, name, labels = '') => {
  const s = (m.series.get(name) ?? []).find((x) => x.labels === labels);
  return s ? s.value : undefined;
};

// The series names a PromQL expression reads: label matchers, ranges,
// strings, grouping clauses, functions and keywords taken out.
const PROMQL_WORDS = new Set(['sum', 'min', 'max', 'avg', 'count', 'rate', 'irate', 'increase', 'deriv',
  'histogram_quantile', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or',
  'unless', 'bool', 'offset', 'abs', 'clamp_min', 'clamp_max', 'topk', 'bottomk', 'absent', 'time', 'vector']);
function seriesIn(expr) {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = bare.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return names.filter((n) => !PROMQL_WORDS.has(n) && !/^\d/.test(n));
}

describe('observability', () => {
  let s;

  before(async () => {
    s = await startPair(pair, {
      flags: true,
      apiEnv: { ...INFO, MATERIALIZE_CHECK: '200ms' },
      ingestEnv: INFO,
      flagsEnv: INFO,
      writer: INFO,
    });
  });

  after(async () => {
    const procs = s ? [s.api, s.ingest, s.flags, s.writer] : [];
    await s?.stop();
    // a clean exit: in the sanitizer tree, no leak or error report either
    for (const p of procs) {
      const { code } = await p.exited;
      assert.equal(code, 0, p.stderr().slice(-4000));
    }
  });

  test('api: one access line per request, with the route pattern, project and status, 401s and 404s included', async () => {
    const P = s.boot.project_id;
    const key = { Authorization: `Bearer ${s.boot.personal_api_key}` };
    const cases = [
      { what: 'ok', path: `/api/projects/${P}/feature_flags/`, headers: key, status: 200, route: '/api/projects/{project_id}/feature_flags/', project: String(P) },
      { what: 'nokey', path: `/api/projects/${P}/feature_flags/`, headers: {}, status: 401, route: '/api/projects/{project_id}/feature_flags/' },
      { what: 'badkey', path: `/api/projects/${P}/feature_flags/`, headers: { Authorization: 'Bearer phx_not_a_key_at_all_0000000000000000000' }, status: 401, route: '/api/projects/{project_id}/feature_flags/' },
      { what: 'unmatched', path: `/no/such/path/${P}`, headers: key, status: 404, route: 'unmatched' },
    ];
    for (const c of cases) {
      const id = rid(c.what);
      const r = await send(`${s.apiUrl}${c.path}`, { headers: c.headers, id });
      assert.equal(r.status, c.status, c.what);
      const line = await accessLine(s.api, id);
      checkCommon(line, { service: 'api', method: 'GET', route: c.route, status: c.status, bytes: r.bytes });
      assert.equal(line.project_id, c.project, `${c.what}: ${JSON.stringify(line)}`);
      assert.ok(!JSON.stringify(line).includes(s.boot.personal_api_key), 'the key is never logged');
    }
  });

  test('a request refused while parsing gets its line (method null); HEAD sends no body bytes', async () => {
    const id = rid('malformed');
    const c = await connect(s.api.port);
    c.write(`GET /api/projects/ HTTP/1.1\r\nHost: a\r\nX-Request-Id: ${id}\r\nBad Header: x\r\n\r\n`);
    const res = await c.response();
    c.destroy();
    assert.equal(res.status, 400);
    let line = await accessLine(s.api, id);
    checkCommon(line, { service: 'api', method: null, route: 'unmatched', status: 400, bytes: res.body.length });

    const head = rid('head');
    const r = await fetch(`${s.apiUrl}/_health`, { method: 'HEAD', headers: { 'X-Request-Id': head } });
    assert.equal(r.status, 200);
    line = await accessLine(s.api, head);
    checkCommon(line, { service: 'api', method: 'HEAD', route: '/_health', status: 200, bytes: 0 });
  });

  test('api: an endpoint run says which endpoint, version, materialization and cache; the run counters follow', async () => {
    const P = s.boot.project_id;
    const E = `${s.apiUrl}/api/projects/${P}/endpoints/`;
    const key = { Authorization: `Bearer ${s.boot.personal_api_key}` };
    const made = await send(E, { method: 'POST', headers: key, id: rid('create'), body: { name: 'obs-count', query: { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events' } } });
    assert.equal(made.status, 201);
    const before = await scrape(s.api.port);

    const first = rid('run');
    let r = await send(`${E}obs-count/run`, { method: 'POST', headers: key, id: first, body: {} });
    assert.equal(r.status, 200);
    let line = await accessLine(s.api, first);
    checkCommon(line, { service: 'api', method: 'POST', route: '/api/projects/{project_id}/endpoints/{name}/run', status: 200, bytes: r.bytes });
    assert.equal(line.project_id, String(P));
    assert.equal(line.endpoint, 'obs-count');
    assert.equal(line.endpoint_version, '1');
    assert.equal(line.materialized, 'false');
    assert.equal(line.answered_by, 'query');
    assert.equal(line.cache, 'miss');

    const second = rid('run');
    r = await send(`${E}obs-count/run`, { method: 'POST', headers: key, id: second, body: {} });
    assert.equal(r.status, 200);
    line = await accessLine(s.api, second);
    assert.equal(line.cache, 'hit');
    assert.equal(line.answered_by, 'cache');

    const bad = rid('run');
    r = await send(`${E}obs-count/run`, { method: 'POST', headers: key, id: bad, body: { refresh: 'direct' } });
    assert.equal(r.status, 400);
    line = await accessLine(s.api, bad);
    assert.equal(line.status, 400);

    const after = await scrape(s.api.port);
    const delta = (name, labels) => (value(after, name, labels) ?? 0) - (value(before, name, labels) ?? 0);
    assert.equal(delta('api_endpoint_runs_total', '{result="ok"}'), 1);
    assert.equal(delta('api_endpoint_runs_total', '{result="cached"}'), 1);
    assert.equal(delta('api_endpoint_cache_lookups_total', '{result="miss"}'), 1);
    assert.equal(delta('api_endpoint_cache_lookups_total', '{result="hit"}'), 1);
    // the refused refresh never reached a source: not a run
    assert.equal(delta('api_endpoint_runs_total', '{result="invalid"}'), 0);
    assert.ok(delta('store_operation_duration_seconds_count', '{store="store",op="read"}') >= 2);
    // the computed run read the event store; the cached one did not
    assert.equal(delta('store_operation_duration_seconds_count', '{store="events",op="query"}'), 1);
  });

  test('api: a materialization logs its start and end (duration, table) and counts', async () => {
    const P = s.boot.project_id;
    const E = `/api/projects/${P}/endpoints/`;
    // three event names stored first: the table has a row per name
    const names = ['obs-m-1', 'obs-m-2', 'obs-m-3'];
    const sent = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch: names.map((event) => ({ event, distinct_id: 'obs-m' })) }) });
    assert.equal(sent.status, 200);
    await within(20000, 'the events stored', async () => (await s.store.count("event LIKE 'obs-m-%'")) === 3);
    assert.equal(await s.store.count(), 3, 'no other events in the store');
    const r = await s.call('POST', E, { name: 'obs-mat', is_materialized: true, query: { kind: 'HogQLQuery', query: 'SELECT event, count() AS c FROM events GROUP BY event' } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await within(20000, 'the table built', async () => (await s.call('GET', `${E}obs-mat/materialization_status`)).json.status === 'Completed');
    const started = lines(s.api).filter((j) => j.msg === 'materialization started');
    const ended = lines(s.api).filter((j) => j.msg === 'materialization ended');
    assert.equal(started.length, 1, JSON.stringify(started));
    assert.equal(ended.length, 1, JSON.stringify(ended));
    assert.equal(ended[0].result, 'completed');
    assert.equal(ended[0].project_id, String(P));
    assert.equal(ended[0].version_id, started[0].version_id);
    assert.equal(typeof ended[0].duration_ms, 'number');
    assert.ok(ended[0].duration_ms >= 0);
    assert.match(ended[0].table, /\S/);
    assert.equal(ended[0].error, null);
    assert.equal(ended[0].rows, 3);
    const m = await scrape(s.api.port);
    assert.equal(value(m, 'api_materializations_total', '{result="completed"}'), 1);
    assert.equal(value(m, 'api_materializations_total', '{result="failed"}'), 0);
    assert.equal(value(m, 'api_materialization_duration_seconds_count'), 1);
    assert.equal(value(m, 'api_materializations_running'), 0);
    const last = value(m, 'api_materialization_last_success_timestamp_seconds');
    assert.ok(Math.abs(last - Date.now() / 1000) < 120, String(last));
  });

  test('ingest and flags: access lines with the project, refusals included', async () => {
    const token = s.boot.project_api_token;
    const batch = (t) => ({ api_key: t, batch: [{ event: 'obs', distinct_id: 'obs-user' }] });
    let id = rid('capture');
    let r = await send(`${s.ingestUrl}/batch/`, { method: 'POST', body: batch(token), id });
    assert.equal(r.status, 200);
    let line = await accessLine(s.ingest, id);
    checkCommon(line, { service: 'ingest', method: 'POST', route: '/batch/', status: 200, bytes: r.bytes });
    assert.equal(line.project_token, token);

    id = rid('capture');
    r = await send(`${s.ingestUrl}/batch/`, { method: 'POST', body: batch('phc_obs_never_a_project'), id });
    assert.equal(r.status, 401);
    line = await accessLine(s.ingest, id);
    checkCommon(line, { service: 'ingest', method: 'POST', route: '/batch/', status: 401, bytes: r.bytes });

    const flagsUrl = `http://127.0.0.1:${s.flags.port}`;
    id = rid('flags');
    await within(15000, 'flags knows the project', async () => {
      const probe = await fetch(`${flagsUrl}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token, distinct_id: 'obs' }) });
      await probe.arrayBuffer();
      return probe.status === 200;
    });
    r = await send(`${flagsUrl}/flags?v=2`, { method: 'POST', body: { token, distinct_id: 'obs-user' }, id });
    assert.equal(r.status, 200);
    line = await accessLine(s.flags, id);
    checkCommon(line, { service: 'flags', method: 'POST', route: '/flags', status: 200, bytes: r.bytes });
    assert.equal(line.project_id, String(s.boot.project_id));

    id = rid('flags');
    r = await send(`${flagsUrl}/flags?v=2`, { method: 'POST', body: { token: 'phc_obs_never_a_project', distinct_id: 'x' }, id });
    assert.equal(r.status, 401);
    line = await accessLine(s.flags, id);
    checkCommon(line, { service: 'flags', method: 'POST', route: '/flags', status: 401, bytes: r.bytes });
    assert.equal(line.project_id, undefined);
  });

  test('sampling: ACCESS_LOG_SAMPLE=0 logs errors only; a bad rate is refused at start', async () => {
    const ingest = await startServer(path.join(BUILD, 'bin', 'ingest'), { INGEST_PORT: '0', REDIS_URL: s.redis.url, LOG_LEVEL: 'info', ACCESS_LOG_SAMPLE: '0' });
    try {
      const url = `http://127.0.0.1:${ingest.port}`;
      const ok = [];
      for (let i = 0; i < 5; i++) {
        const id = rid('sampled');
        ok.push(id);
        assert.equal((await send(`${url}/_health`, { id })).status, 200);
      }
      const missing = rid('sampled');
      assert.equal((await send(`${url}/nowhere`, { id: missing })).status, 404);
      const refused = rid('sampled');
      assert.ok((await send(`${url}/batch/`, { method: 'POST', body: { batch: [] }, id: refused })).status >= 400);
      await accessLine(ingest, missing);
      await accessLine(ingest, refused);
      for (const id of ok) assert.equal(accessLines(ingest, id).length, 0, id);
    } finally {
      const { code } = await ingest.stop();
      assert.equal(code, 0, ingest.stderr().slice(-4000));
    }
    await assert.rejects(
      startServer(path.join(BUILD, 'bin', 'ingest'), { INGEST_PORT: '0', REDIS_URL: s.redis.url, ACCESS_LOG_SAMPLE: '1.5' }),
      /ACCESS_LOG_SAMPLE/);
  });

  test('/metrics: the process_* series on every service, with HELP and TYPE', async () => {
    const services = { api: s.api, ingest: s.ingest, flags: s.flags, writer: s.writer };
    const now = Date.now() / 1000;
    for (const [name, proc] of Object.entries(services)) {
      await within(15000, `${name} ready`, async () => (await fetch(`http://127.0.0.1:${proc.port}/_ready`)).status === 200);
      const m = await scrape(proc.port);
      const want = {
        process_cpu_seconds_total: 'counter', process_resident_memory_bytes: 'gauge', process_virtual_memory_bytes: 'gauge',
        process_open_fds: 'gauge', process_max_fds: 'gauge', process_start_time_seconds: 'gauge', service_ready: 'gauge',
      };
      for (const [family, type] of Object.entries(want)) {
        assert.equal(m.types.get(family), type, `${name} ${family}`);
        assert.ok(m.helps.has(family), `${name} ${family} HELP`);
      }
      // a fresh process may not have used a clock tick (10 ms) yet
      const cpu = value(m, 'process_cpu_seconds_total');
      assert.ok(cpu >= 0 && cpu < 600, `${name}: ${cpu}`);
      assert.ok(value(m, 'process_resident_memory_bytes') > 1 << 20, name);
      assert.ok(value(m, 'process_virtual_memory_bytes') >= value(m, 'process_resident_memory_bytes'), name);
      // this process's own descriptors, counted independently
      const fds = fs.readdirSync(`/proc/${proc.pid}/fd`).length;
      assert.ok(Math.abs(value(m, 'process_open_fds') - fds) <= 4, `${name}: ${value(m, 'process_open_fds')} vs ${fds}`);
      assert.ok(value(m, 'process_max_fds') >= value(m, 'process_open_fds'), name);
      assert.ok(value(m, 'process_start_time_seconds') > now - 3600 && value(m, 'process_start_time_seconds') <= now + 1, name);
      assert.equal(value(m, 'service_ready', `{service="${name}"}`), 1, name);
    }
  });

  test('/metrics: writer lag and pending follow the stream; the api outbox and stores are measured', async () => {
    // The gauges' values against a real backlog are racy to test (the
    // writer drains it); they must exist, as the rules read them.
    await within(15000, 'the writer reports its lag', async () => {
      const m = await scrape(s.writer.port);
      return value(m, 'queue_consumer_lag_messages', `{topic="${MAIN}",partition="0"}`) !== undefined;
    });
    const w = await scrape(s.writer.port);
    assert.equal(w.types.get('queue_consumer_lag_messages'), 'gauge');
    assert.ok(value(w, 'queue_consumer_lag_messages', `{topic="${MAIN}",partition="0"}`) >= 0);
    assert.ok(value(w, 'queue_consumer_pending_messages', `{topic="${MAIN}"}`) >= 0);
    assert.ok(value(w, 'store_operation_duration_seconds_count', '{store="persons",op="transaction"}') >= 0);
    assert.ok(value(w, 'store_operation_duration_seconds_count', '{store="events",op="insert"}') > 0, 'the writer stored batches');
    const a = await scrape(s.api.port);
    assert.equal(value(a, 'api_outbox_entries'), 0, 'the bootstrap changes are published');
    assert.equal(value(a, 'api_outbox_oldest_age_seconds'), 0);
    assert.ok(value(a, 'store_operation_duration_seconds_count', '{store="store",op="write"}') > 0);
  });

  test('deploy/observability: promtool accepts the rules; the dashboard has what Grafana needs; every series they name is exposed', async () => {
    const rulesFile = path.join(OBS, 'alerts.yml');
    const { stdout } = await run('promtool', ['check', 'rules', rulesFile]).catch((e) => {
      if (e.code === 'ENOENT') throw new Error('promtool is missing: scripts/setup installs it (Debian\'s prometheus package)');
      throw new Error(`promtool refused ${rulesFile}: ${e.stdout}${e.stderr}`);
    });
    assert.match(stdout, /SUCCESS: \d+ rules found/);

    const dash = JSON.parse(fs.readFileSync(path.join(OBS, 'dashboard.json'), 'utf8'));
    assert.match(dash.uid, /^[a-zA-Z0-9_-]{1,40}$/);
    assert.ok(dash.title);
    assert.ok(Number.isInteger(dash.schemaVersion));
    assert.ok(dash.panels.length >= 10);
    const ids = new Set();
    const exprs = [];
    for (const p of dash.panels) {
      assert.ok(p.title && p.type && p.gridPos, JSON.stringify(p).slice(0, 200));
      assert.ok(!ids.has(p.id), `panel id ${p.id} twice`);
      ids.add(p.id);
      assert.ok(p.targets.length > 0, p.title);
      for (const t of p.targets) {
        assert.ok(t.refId && t.expr, p.title);
        exprs.push({ where: `dashboard "${p.title}"`, expr: t.expr });
      }
    }
    const rules = YAML.parse(fs.readFileSync(rulesFile, 'utf8'));
    for (const g of rules.groups) for (const r of g.rules) exprs.push({ where: `alert ${r.alert}`, expr: r.expr });

    // Every series the services expose, scraped now (the writer's lag
    // gauges appear with its first XINFO: waited for above).
    const exposed = new Set(['up']); // Prometheus's own, per scrape target
    for (const proc of [s.api, s.ingest, s.flags, s.writer]) {
      for (const name of (await scrape(proc.port)).series.keys()) exposed.add(name);
    }
    const missing = [];
    for (const { where, expr } of exprs) {
      const names = seriesIn(expr);
      assert.ok(names.length > 0, `${where}: no series in ${expr}`);
      for (const n of names) if (!exposed.has(n)) missing.push(`${where}: ${n}`);
    }
    assert.deepEqual(missing, []);
  });
});

describe('observability: writer pending on Redis Streams', () => {
  let s;
  before(async () => {
    // entries of a writer gone are claimed after 1 s idle, not 30 s
    s = await startPair(pair, { writer: { WRITER_CLAIM_IDLE: '1s' } });
  });
  after(async () => {
    await s?.stop();
  });

  test('entries delivered and never acknowledged show as pending; lag and pending return to 0 once stored', async () => {
    const gauges = async () => {
      const m = await scrape(s.writer.port);
      return { lag: value(m, 'queue_consumer_lag_messages', `{topic="${MAIN}",partition="0"}`), pending: value(m, 'queue_consumer_pending_messages', `{topic="${MAIN}"}`) };
    };
    s.writer.child.kill('SIGTERM');
    await s.writer.exited;
    const N = 30;
    const events = Array.from({ length: N }, (_, i) => ({ event: 'obs-pending', distinct_id: `pending-${i}` }));
    const post = () => fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch: events }) });
    assert.equal((await post()).status, 200);
    const good = s.writerEnv;
    s.writerEnv = { ...good, PERSONS_DATABASE_URL: 'postgres://obs@127.0.0.1:1/none' };
    s.writer = await startServer(path.join(BUILD, 'bin', 'writer'), s.writerEnv);
    let g;
    await within(20000, `${N} pending`, async () => (g = await gauges()).pending === N).catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(g)}`); });
    assert.equal(g.lag, 0, 'every entry was delivered');
    // a working writer takes them over and stores them
    s.writer.child.kill('SIGTERM');
    await s.writer.exited;
    s.writerEnv = good;
    s.writer = await startServer(path.join(BUILD, 'bin', 'writer'), s.writerEnv, { ready: true });
    await within(30000, 'the entries stored', async () => (await s.store.count("event = 'obs-pending'")) === N);
    await within(20000, 'nothing pending', async () => (g = await gauges()).pending === 0 && g.lag === 0).catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(g)}`); });
  });
});

// The Kafka writer's lag comes from librdkafka's statistics (every second),
// per partition: series appear for the partitions the group consumed, and
// fall to 0 once the writer has stored everything.
const kafka = PAIRS.find((p) => p.queue === 'kafka');
if (kafka) describe('observability: writer lag on Kafka', () => {
  let s;
  before(async () => {
    s = await startPair(kafka, { writer: { LOG_LEVEL: 'warn' } });
  });
  after(async () => {
    await s?.stop();
  });

  test('queue_consumer_lag_messages per partition, back to 0 once the events are stored', async () => {
    const events = Array.from({ length: 40 }, (_, i) => ({ event: 'obs-kafka', distinct_id: `user-${i}` }));
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch: events }) });
    assert.equal(r.status, 200);
    await within(30000, 'the events stored', async () => (await s.store.count("event = 'obs-kafka'")) === 40);
    let lags = [];
    await within(15000, 'every reported partition caught up', async () => {
      const m = await scrape(s.writer.port);
      lags = (m.series.get('queue_consumer_lag_messages') ?? []).filter((x) => x.labels.startsWith(`{topic="${MAIN}",`));
      return lags.length > 0 && lags.every((x) => x.value === 0);
    });
    for (const x of lags) assert.match(x.labels, /^\{topic="[^"]+",partition="[0-3]"\}$/);
  });

  test('a backlog shows as lag: a writer that cannot store (its persons store away) lags by what waits', async () => {
    // The group's offsets are committed (the test above); this writer
    // joins, fetches and hands every batch back, committing nothing.
    s.writer.child.kill('SIGTERM');
    await s.writer.exited;
    const N = 30;
    const events = Array.from({ length: N }, (_, i) => ({ event: 'obs-backlog', distinct_id: `backlog-${i}` }));
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: s.boot.project_api_token, batch: events }) });
    assert.equal(r.status, 200);
    s.writerEnv = { ...s.writerEnv, PERSONS_DATABASE_URL: 'postgres://obs@127.0.0.1:1/none' };
    s.writer = await startServer(path.join(BUILD, 'bin', 'writer'), s.writerEnv);
    let total = -1;
    await within(30000, `a lag of ${N}`, async () => {
      const m = await scrape(s.writer.port);
      const lags = (m.series.get('queue_consumer_lag_messages') ?? []).filter((x) => x.labels.startsWith(`{topic="${MAIN}",`));
      total = lags.reduce((a, x) => a + x.value, 0);
      return total === N;
    }).catch((e) => { throw new Error(`${e.message}: last total ${total}`); });
    assert.equal(await s.store.count("event = 'obs-backlog'"), 0, 'nothing was stored meanwhile');
  });
});
