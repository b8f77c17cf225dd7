// oauth.mjs - what the OAuth tests share: a test CA and an HTTPS server on
// 127.0.0.1 that serves client metadata documents (each path answered by a
// handler the test sets), an api started on a port chosen first (its issuer
// is BASE_URL, so the port must be known before it starts), and the
// browser-less sign-in and consent a client's user would do.
import { execFileSync, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './proc.mjs';
import { startRedis } from './redis.mjs';
import { startPostgres } from './postgres.mjs';

const run = promisify(execFile);
export const API = path.join(BUILD, 'bin/api');

// A CA and a server certificate for 127.0.0.1 and ::1, made with openssl.
// The address is also a DNS name in the certificate: mbedTLS 2.28 (the
// api's TLS) matches a host only against dNSName entries, not iPAddress.
export function makeCA(dir) {
  const f = (n) => path.join(dir, n);
  const ssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=cm test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  fs.writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1',
    '-keyout', f('srv.key'), '-out', f('srv.csr'));
  ssl('x509', '-req', '-in', f('srv.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-days', '2', '-extfile', f('ext.cnf'), '-out', f('srv.pem'));
  return { ca: f('ca.pem'), key: fs.readFileSync(f('srv.key')), cert: fs.readFileSync(f('srv.pem')) };
}

// An HTTPS server whose answers the test decides: routes.set(path, (req, res) => ...).
// hits counts the requests per path.
export async function startDocServer(tls) {
  const routes = new Map();
  const hits = new Map();
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const p = new URL(req.url, 'https://127.0.0.1').pathname;
    hits.set(p, (hits.get(p) || 0) + 1);
    const h = routes.get(p);
    if (h) return h(req, res);
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `https://127.0.0.1:${server.address().port}`;
  return {
    base, routes, hits,
    // a document for path, served as JSON with Cache-Control max-age
    doc(p, body, { maxAge = 600, status = 200, headers = {} } = {}) {
      routes.set(p, (req, res) => {
        const v = typeof body === 'function' ? body() : body;
        const text = typeof v === 'string' ? v : JSON.stringify(v);
        res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': `max-age=${maxAge}`, ...headers });
        res.end(text);
      });
      return `${base}${p}`;
    },
    stop: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    // below the ephemeral range, as the other servers of the tests
    s.listen(12000 + Math.floor(Math.random() * 20000), '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// redis, a metadata store (sqlite or postgres), a bootstrapped account and
// the api on a port known beforehand; env adds to the api's environment.
export async function startOAuthApi({ backend = 'sqlite', env = {}, oauthHost = false } = {}) {
  const s = { tmp: fs.mkdtempSync(path.join(os.tmpdir(), 'cm-oauth-')) };
  s.redis = await startRedis();
  s.dbUrl = backend === 'postgres' ? (s.pg = startPostgres()).database('meta') : `sqlite:${s.tmp}/meta.db`;
  let lastError;
  for (let attempt = 0; attempt < 5 && !s.api; attempt++) {
    const port = await freePort();
    s.base = `http://127.0.0.1:${port}`;
    s.env = {
      API_PORT: String(port), BASE_URL: s.base, REDIS_URL: s.redis.url, DATABASE_URL: s.dbUrl,
      EVENTS_DB: `${s.tmp}/events.db`, LOG_LEVEL: 'warn', PUBLISH_RETRY: '100ms',
      ...(oauthHost ? { OAUTH_URL: `http://localhost:${port}` } : {}), ...env,
    };
    if (!s.boot) s.boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...s.env } })).stdout);
    try {
      s.api = await startServer(API, s.env, { ready: true });
    } catch (e) {
      lastError = e; // the port was taken meanwhile: another one
    }
  }
  if (!s.api) throw lastError;
  s.cli = (...args) => run(API, args, { env: { ...process.env, ...s.env } });
  s.cliEnv = (env, ...args) => run(API, args, { env: { ...process.env, ...s.env, ...env } });
  s.stop = async () => {
    await s.api?.stop();
    await s.redis?.stop();
    s.pg?.stop();
    fs.rmSync(s.tmp, { recursive: true, force: true });
  };
  return s;
}

// A browser's visit without a browser: cookies kept, redirects not followed.
export class Visitor {
  constructor() { this.cookies = new Map(); }
  async go(url, { method = 'GET', form, origin, headers: extra = {} } = {}) {
    const headers = { ...extra };
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    if (origin) headers.Origin = origin;
    const r = await fetch(url, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const c of r.headers.getSetCookie?.() ?? []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: r.status, location: r.headers.get('location'), text: await r.text(), headers: r.headers };
  }
}

// The hidden fields and the CSRF token of a page's form.
export function formOf(html) {
  const fields = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[m[1]] = m[2].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  return fields;
}

// Signs in (if asked) and approves at an authorization URL; resolves with
// the redirect back to the client (its URL), or the last answer.
export async function approve(visitor, authorizeUrl, { email, password, access = 'all', decision = 'approve' }) {
  let r = await visitor.go(authorizeUrl);
  const base = new URL(authorizeUrl).origin;
  if (r.status === 200 && r.text.includes('name="password"')) {
    const f = formOf(r.text);
    r = await visitor.go(`${base}/oauth/authorize`, { method: 'POST', form: { ...f, email, password }, origin: base });
    if (r.status !== 303) return r;
    r = await visitor.go(new URL(r.location, base).href);
  }
  if (r.status !== 200 || !r.text.includes('name="csrf"')) return r;
  const f = formOf(r.text);
  r = await visitor.go(`${base}/oauth/authorize`, { method: 'POST', form: { ...f, access, decision }, origin: base });
  return r;
}
