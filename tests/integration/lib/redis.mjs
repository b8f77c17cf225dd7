// redis.mjs - a real redis-server per test file, and a minimal RESP client.
//
// The server binds 127.0.0.1 on a random high port (retried if taken) and is
// killed by PID when the test process exits. It keeps no data on disk unless
// asked to persist: then every write is in its append-only file before the
// reply (appendfsync always), and a restart on the same dir reloads it.
import { spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const children = new Set();
process.on('exit', () => { for (const c of children) { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } } });

function tryStart(port, dir, persist, extra = []) {
  return new Promise((resolve) => {
    const aof = persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
      ...aof, '--daemonize', 'no', '--dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    const done = (ok) => { clearTimeout(t); resolve(ok ? child : null); };
    const t = setTimeout(() => { child.kill('SIGKILL'); done(false); }, 5000);
    child.stdout.on('data', (d) => { out += d; if (out.includes('Ready to accept connections')) done(true); });
    child.on('exit', () => { children.delete(child); done(false); });
  });
}

// startRedis([port], {persist, dir}): dir reuses an earlier server's data
// (a restart); the caller removes a dir it passed, stop() one made here
// unless it persists (a restart may follow).
//
// tls: {cert, key, ca} (PEM files) also serves TLS on tlsPort (random when
// not given: pass the first server's on a restart), clients not asked for a
// certificate; unixSocket: also listens on <dir>/redis.sock (mode 0700).
// The plain port stays open for redisCommand(). args: more redis-server
// arguments (e.g. ['--replicaof', '127.0.0.1', primaryPort]).
export async function startRedis(port, { persist = false, dir, tls, tlsPort, unixSocket = false, args = [] } = {}) {
  const own = !dir;
  dir ||= fs.mkdtempSync(path.join(os.tmpdir(), 'cm-redis-'));
  for (let attempt = 0; attempt < 20; attempt++) {
    // Below the usual ephemeral range (32768-60999): a client's port there
    // could make the bind fail.
    const p = port || 12000 + Math.floor(Math.random() * 20000);
    const tp = tls ? tlsPort || 12000 + Math.floor(Math.random() * 20000) : 0;
    const sock = path.join(dir, 'redis.sock');
    const extra = [
      ...(tls ? ['--tls-port', String(tp), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key,
        '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no'] : []),
      ...(unixSocket ? ['--unixsocket', sock, '--unixsocketperm', '700'] : []),
      ...args,
    ];
    const child = await tryStart(p, dir, persist, extra);
    if (child) {
      const exited = new Promise((r) => child.on('exit', r));
      return {
        port: p, child, dir, url: `redis://127.0.0.1:${p}/0`,
        tlsPort: tp, socket: unixSocket ? sock : undefined,
        async stop() {
          child.kill('SIGKILL');
          await exited;
          if (own && !persist) fs.rmSync(dir, { recursive: true, force: true });
        },
        remove() { fs.rmSync(dir, { recursive: true, force: true }); },
      };
    }
    if (port) break;
  }
  throw new Error('could not start redis-server');
}

// Sends one command, resolves with the decoded reply.
export function redisCommand(port, ...args) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let buf = Buffer.alloc(0);
    sock.on('error', reject);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const r = parseReply(buf, 0);
      if (r) { sock.end(); r.value instanceof Error ? reject(r.value) : resolve(r.value); }
    });
    let cmd = `*${args.length}\r\n`;
    const parts = [];
    for (const a of args) {
      const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a));
      parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
    }
    sock.write(Buffer.concat([Buffer.from(cmd), ...parts]));
  });
}

function parseReply(buf, i) {
  const nl = buf.indexOf('\r\n', i);
  if (nl < 0) return null;
  const line = buf.subarray(i + 1, nl).toString();
  const next = nl + 2;
  switch (String.fromCharCode(buf[i])) {
    case '+': return { value: line, end: next };
    case '-': return { value: new Error(line), end: next };
    case ':': return { value: Number(line), end: next };
    case '$': {
      const n = Number(line);
      if (n < 0) return { value: null, end: next };
      if (buf.length < next + n + 2) return null;
      return { value: buf.subarray(next, next + n).toString('utf8'), end: next + n + 2 };
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return { value: null, end: next };
      const arr = [];
      let pos = next;
      for (let k = 0; k < n; k++) {
        const r = parseReply(buf, pos);
        if (!r) return null;
        arr.push(r.value);
        pos = r.end;
      }
      return { value: arr, end: pos };
    }
    default: throw new Error(`bad RESP byte ${buf[i]}`);
  }
}
