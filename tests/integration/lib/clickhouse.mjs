// clickhouse.mjs - a real ClickHouse server per test file (Debian's
// clickhouse-server, 18.16 on bookworm; upstream's `clickhouse server` also
// works), and a small client over its HTTP interface.
//
// The server is a plain local process run from a config.xml/users.xml
// generated in a fresh temp dir that also holds its data, tmp, user_files,
// format_schemas and log files. It binds 127.0.0.1 only, on an HTTP and a
// native TCP port picked at random below the ephemeral range (retried when
// taken), opens no interserver port, and is sized for a 2-core machine.
// It is killed by PID by stop(), when the test process exits, and — through
// setpriv's parent-death signal — also when the test process itself is
// killed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const PREFIX = 'cm-ch-';
const servers = new Map(); // pid -> dir
process.on('exit', () => {
  for (const [pid, dir] of servers) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
  }
});

function onPath(name) {
  const dirs = (process.env.PATH || '').split(':').concat(['/usr/sbin', '/usr/bin']);
  for (const d of dirs) {
    const p = path.join(d, name);
    try { fs.accessSync(p, fs.constants.X_OK); return p; } catch { /* next */ }
  }
  return null;
}

// [binary, leading args]: CLICKHOUSE_SERVER overrides; Debian ships
// clickhouse-server, upstream builds a single `clickhouse` multi-tool.
function serverCommand() {
  if (process.env.CLICKHOUSE_SERVER) return [process.env.CLICKHOUSE_SERVER, []];
  const s = onPath('clickhouse-server');
  if (s) return [s, []];
  const c = onPath('clickhouse');
  if (c) return [c, ['server']];
  throw new Error('clickhouse-server not found: run scripts/setup');
}

const SETPRIV = onPath('setpriv');

// Temp dirs of test processes that died without their exit handler.
function sweepStale() {
  let names = [];
  try { names = fs.readdirSync(os.tmpdir()); } catch { return; }
  for (const n of names) {
    const m = n.match(/^cm-ch-(\d+)-/);
    if (!m || Number(m[1]) === process.pid) continue;
    try { process.kill(Number(m[1]), 0); } catch (e) {
      if (e.code === 'ESRCH') fs.rmSync(path.join(os.tmpdir(), n), { recursive: true, force: true });
    }
  }
}

function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ host: '127.0.0.1', port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

// Below the usual ephemeral range (32768-60999): a client's port there could
// make the bind fail.
async function pickPorts() {
  for (;;) {
    const http = 12000 + Math.floor(Math.random() * 20000);
    const tcp = 12000 + Math.floor(Math.random() * 20000);
    if (http !== tcp && await portFree(http) && await portFree(tcp)) return [http, tcp];
  }
}

const xml = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function configXml(dir, httpPort, tcpPort, keepAlive, extra = '') {
  const p = (sub) => xml(path.join(dir, sub) + '/');
  return `<?xml version="1.0"?>
<clickhouse>
  <logger>
    <level>warning</level>
    <log>${xml(path.join(dir, 'server.log'))}</log>
    <errorlog>${xml(path.join(dir, 'server.err.log'))}</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <path>${p('data')}</path>
  <tmp_path>${p('tmp')}</tmp_path>
  <user_files_path>${p('user_files')}</user_files_path>
  <format_schema_path>${p('format_schemas')}</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mlock_executable>false</mlock_executable>
  <max_connections>256</max_connections>
  <max_concurrent_queries>32</max_concurrent_queries>
  <keep_alive_timeout>${keepAlive}</keep_alive_timeout>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
${extra}</clickhouse>
`;
}

function usersXml(password) {
  return `<?xml version="1.0"?>
<clickhouse>
  <profiles>
    <default>
      <max_threads>2</max_threads>
      <max_memory_usage>2000000000</max_memory_usage>
      <background_pool_size>4</background_pool_size>
      <background_schedule_pool_size>4</background_schedule_pool_size>
    </default>
  </profiles>
  <users>
    <default>
      <password>${xml(password)}</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</clickhouse>
`;
}

function tail(file, n = 2000) {
  try { const s = fs.readFileSync(file, 'utf8'); return s.slice(-n); } catch { return ''; }
}

async function pingOk(url) {
  try {
    const r = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) });
    return r.ok && (await r.text()).trim() === 'Ok.';
  } catch { return false; }
}

// One try on the given ports: resolves with the child once /ping answers,
// with null if the server exited first (e.g. a port was taken meanwhile).
async function tryStart(dir, httpPort, tcpPort, { timeoutMs, keepAliveTimeout, extraConfig }) {
  const extra = extraConfig ? await extraConfig() : '';
  fs.writeFileSync(path.join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort, keepAliveTimeout, extra));
  const [bin, pre] = serverCommand();
  const args = [...pre, `--config-file=${path.join(dir, 'config.xml')}`];
  // setpriv execs the server in place (same PID) with SIGKILL as its
  // parent-death signal: it dies with the test process however that ends.
  const [cmd, argv] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', bin, ...args]] : [bin, args];
  const child = spawn(cmd, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d) => { out = (out + d).slice(-8192); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let gone = false;
  const exited = new Promise((r) => child.on('exit', (code, signal) => {
    gone = true;
    servers.delete(child.pid);
    r({ code, signal });
  }));
  child.on('error', () => { gone = true; });
  if (child.pid) servers.set(child.pid, dir);
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + timeoutMs;
  while (!gone && Date.now() < deadline) {
    if (await pingOk(url)) return { child, exited, url, extra };
    await new Promise((r) => setTimeout(r, 10));
  }
  if (!gone) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`clickhouse did not answer /ping in ${timeoutMs} ms: ${out}${tail(path.join(dir, 'server.err.log'))}`);
  }
  const err = tail(path.join(dir, 'server.err.log'));
  if (/Address already in use/.test(err)) return null;
  throw new Error(`clickhouse exited at start-up: ${out}${err}`);
}

export class ClickHouseError extends Error {
  constructor(status, body) {
    super(`clickhouse HTTP ${status}: ${body.trim()}`);
    this.status = status;
    const m = body.match(/^Code: (\d+)/);
    this.code = m ? Number(m[1]) : undefined;
  }
}

// startClickHouse({password, keepAliveTimeout, timeoutMs}) -> {url,
// httpPort, tcpPort, pid, dir, startupMs, user, password, query, rows, log,
// stop}. The default user has the given password ('' by default);
// keepAliveTimeout is the seconds an idle HTTP connection stays open (3, the
// value Debian's packaged config ships; newer servers default to 30).
// extraConfig: an async () -> XML text added inside <clickhouse> at each
// start attempt (lib/ch_cluster.mjs: macros, ZooKeeper, interserver port).
export { pickPorts };

export async function startClickHouse({ password = '', keepAliveTimeout = 3, timeoutMs = 20000, extraConfig } = {}) {
  sweepStale();
  const t0 = performance.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) fs.mkdirSync(path.join(dir, sub));
  fs.writeFileSync(path.join(dir, 'users.xml'), usersXml(password));
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      const [httpPort, tcpPort] = await pickPorts();
      const started = await tryStart(dir, httpPort, tcpPort, { timeoutMs, keepAliveTimeout, extraConfig });
      if (started) return handle(started, { dir, httpPort, tcpPort, password, startupMs: performance.now() - t0 });
    }
    throw new Error('could not start clickhouse: no free ports');
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

function handle({ child, exited, url, extra }, { dir, httpPort, tcpPort, password, startupMs }) {
  let cur = { child, exited };
  const user = 'default';
  const auth = { 'X-ClickHouse-User': user };
  if (password) auth['X-ClickHouse-Key'] = password;

  // Runs sql over HTTP POST and returns the response text. With body, sql
  // goes in the `query` URL parameter and body (a string, a Buffer, or an
  // array of objects sent as JSONEachRow lines) is the data; settings
  // become URL parameters. A non-2xx answer throws a ClickHouseError.
  async function query(sql, { body, settings = {}, headers = {} } = {}) {
    const u = new URL(url + '/');
    for (const [k, v] of Object.entries(settings)) u.searchParams.set(k, String(v));
    let payload = sql;
    if (body !== undefined) {
      u.searchParams.set('query', sql);
      payload = Array.isArray(body) ? body.map((r) => JSON.stringify(r)).join('\n') + '\n' : body;
    }
    // A kept-alive connection the server closes as idle (keep_alive_timeout,
    // 3 s) just as a request goes out fails with a reset before the server
    // read anything: sent again on a fresh connection, at most twice.
    let r;
    for (let attempt = 0; ; attempt++) {
      try {
        r = await fetch(u, { method: 'POST', headers: { ...auth, ...headers }, body: payload });
        break;
      } catch (e) {
        const code = e?.cause?.code;
        if (attempt >= 2 || !['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(code)) throw e;
      }
    }
    const text = await r.text();
    if (!r.ok) throw new ClickHouseError(r.status, text);
    return text;
  }

  return {
    url, httpPort, tcpPort, pid: child.pid, dir, startupMs, user, password, query,
    // SELECT sql ... FORMAT JSONEachRow, parsed: one object per row.
    async rows(sql, opts) {
      const text = await query(`${sql} FORMAT JSONEachRow`, opts);
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    },
    // Server-side error log so far (warnings and errors only).
    log() { return tail(path.join(dir, 'server.err.log'), 1 << 20); },
    // An outage: the server is killed, stays away ms, then comes back on
    // the same ports with the same data (what it had flushed to its parts).
    async down(ms) {
      try { process.kill(cur.child.pid, 'SIGKILL'); } catch { /* gone */ }
      await cur.exited;
      await new Promise((r) => setTimeout(r, ms));
      const again = await tryStart(dir, httpPort, tcpPort, { timeoutMs: 20000, keepAliveTimeout: 3, extraConfig: extra ? () => extra : undefined });
      if (!again) throw new Error('clickhouse could not take its ports back');
      cur = again;
    },
    async stop() {
      const { child: c, exited: e } = cur;
      if (c.exitCode === null && c.signalCode === null) {
        try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ }
      }
      await e;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

