// redis_tls.test.mjs - managed-Redis shapes end to end: a redis-server with
// TLS (certificates made here with the openssl CLI: a CA, and a server
// certificate it signed for localhost / 127.0.0.1), an ACL user allowed
// everything but the dangerous commands, and a unix socket. The api and the
// flags service run with REDIS_URL=rediss://user:password@localhost:port:
// a flag made through the api is served by flags; a restart of the TLS
// server is survived; a CA that did not sign the server's certificate and a
// wrong password each leave the service not ready with a log line that
// says why, and it still stops cleanly (exit 0: in the sanitizer tree,
// without a leak across the failed attempts and reconnects).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');
const FLAGS = path.join(BUILD, 'bin/flags');
const USER = 'svc';
const PASS = 'p@ss w/rd';
// Generous: the sanitizer tree on a loaded 2-core machine.
const SLOW = 20000;

function makeCa(dir, name) {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-days', '2', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  return { key, cert };
}

function makeCerts(dir) {
  const ca = makeCa(dir, 'test-ca');
  const wrong = makeCa(dir, 'other-ca');
  const key = path.join(dir, 'server.key');
  const csr = path.join(dir, 'server.csr');
  const cert = path.join(dir, 'server.pem');
  const ext = path.join(dir, 'server.ext');
  fs.writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  execFileSync('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=localhost'], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial',
    '-out', cert, '-days', '2', '-extfile', ext], { stdio: 'ignore' });
  // A client certificate from the same CA, for mutual TLS.
  const clientKey = path.join(dir, 'client.key');
  const clientCsr = path.join(dir, 'client.csr');
  const clientCert = path.join(dir, 'client.pem');
  execFileSync('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', clientKey, '-out', clientCsr, '-subj', '/CN=analytics'], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', clientCsr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial',
    '-out', clientCert, '-days', '2'], { stdio: 'ignore' });
  return { ca: ca.cert, wrongCa: wrong.cert, cert, key, clientCert, clientKey };
}

const enc = encodeURIComponent;

describe('managed Redis: rediss://, ACL users, unix sockets', () => {
  let tmp, certs, redis, api, flags, boot, tlsUrl;
  const others = [];

  const ready = async (srv) => (await fetch(`http://127.0.0.1:${srv.port}/_ready`)).status === 200;
  const call = async (method, p, body) => {
    const r = await fetch(`http://127.0.0.1:${api.port}${p}`, {
      method,
      headers: { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) : null, text };
  };
  const flagOn = async (srv, key) => {
    const r = await fetch(`http://127.0.0.1:${srv.port}/flags?v=2`, {
      method: 'POST', body: JSON.stringify({ token: boot.project_api_token, distinct_id: 'user-1' }),
    });
    if (r.status !== 200) return false;
    return (await r.json()).flags?.[key]?.enabled === true;
  };
  const startRedisTls = (port, tlsPort) => startRedis(port, {
    dir: path.join(tmp, 'redis'), persist: true, tls: { cert: certs.cert, key: certs.key, ca: certs.ca }, tlsPort, unixSocket: true,
  });
  const addUser = () => redisCommand(redis.port, 'ACL', 'SETUSER', USER, 'on', `>${PASS}`, '~*', '&*', '+@all', '-@dangerous');
  const stopAndCheck = async (srv) => {
    const exit = await srv.stop();
    assert.equal(exit.code, 0, srv.stderr());
  };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-redistls-test-'));
    fs.mkdirSync(path.join(tmp, 'redis'));
    certs = makeCerts(tmp);
    redis = await startRedisTls();
    await addUser();
    tlsUrl = `rediss://${USER}:${enc(PASS)}@localhost:${redis.tlsPort}/0?ssl_ca_certs=${enc(certs.ca)}`;
    const env = { API_PORT: '0', REDIS_URL: tlsUrl, DATABASE_URL: `sqlite:${tmp}/meta.db`, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'warn' };
    boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...env } })).stdout);
    api = await startServer(API, env, { ready: true, timeoutMs: SLOW });
    // No periodic re-read within the test (an hour): after the Redis restart
    // below, a flag changed while flags was away must be served at once,
    // whichever of flags' two clients reconnects first (store.c,
    // owe_full_read).
    flags = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: tlsUrl, LOG_LEVEL: 'warn', DEFINITIONS_REFRESH: '3600s' });
    await within(SLOW, 'flags is ready over TLS', () => ready(flags));
  });

  after(async () => {
    for (const s of [flags, api, ...others]) await s?.stop('SIGKILL');
    await redis?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('over rediss:// as an ACL user: a flag made through the api is served by flags', async () => {
    const made = await call('POST', `/api/projects/${boot.project_id}/feature_flags/`, {
      key: 'tls-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    assert.equal(made.status, 201, made.text);
    await within(SLOW, 'flags serves tls-flag', () => flagOn(flags, 'tls-flag'));
    assert.equal(await ready(api), true);
    // The services' connections came in over TLS as the ACL user: the plain
    // port only ever saw this test's own commands (as default).
    const clients = await redisCommand(redis.port, 'CLIENT', 'LIST');
    assert.match(clients, new RegExp(`user=${USER} `));
    assert.ok(clients.split('\n').filter((l) => l.includes(`user=${USER} `)).length >= 3, clients);
  });

  test('the TLS server killed and restarted: the services reconnect and serve again', async () => {
    const { port, tlsPort } = redis;
    await redis.stop();
    // flags stays ready on what it loaded (by design); the api needs Redis.
    await within(SLOW, 'the api notices', async () => !(await ready(api)));
    redis = await startRedisTls(port, tlsPort);
    await addUser(); // ACL users are not persisted without an ACL file
    await within(SLOW, 'flags is ready again', () => ready(flags));
    await within(SLOW, 'the api is ready again', () => ready(api));
    const made = await call('POST', `/api/projects/${boot.project_id}/feature_flags/`, {
      key: 'after-restart', filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    assert.equal(made.status, 201, made.text);
    await within(SLOW, 'flags serves the new flag', () => flagOn(flags, 'after-restart'));
    assert.equal(await flagOn(flags, 'tls-flag'), true);
  });

  test('unix socket with the ACL user: unix://user:password@/path and ?password=', async () => {
    for (const url of [
      `unix://${USER}:${enc(PASS)}@${redis.socket}`,
      `unix://${redis.socket}?username=${USER}&password=${enc(PASS)}&db=0`,
    ]) {
      const f = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: url, LOG_LEVEL: 'warn' });
      others.push(f);
      await within(SLOW, `flags is ready on ${url.replace(/:[^@]*@/, ':***@')}`, () => ready(f));
      assert.equal(await flagOn(f, 'tls-flag'), true);
      await stopAndCheck(f);
    }
  });

  test('mutual TLS: a server that asks for a client certificate takes ssl_certfile / ssl_keyfile', async () => {
    await redisCommand(redis.port, 'CONFIG', 'SET', 'tls-auth-clients', 'yes');
    try {
      const withCert = await startServer(FLAGS, {
        FLAGS_PORT: '0', LOG_LEVEL: 'warn',
        REDIS_URL: `${tlsUrl}&ssl_certfile=${enc(certs.clientCert)}&ssl_keyfile=${enc(certs.clientKey)}`,
      });
      others.push(withCert);
      await within(SLOW, 'flags with a client certificate is ready', () => ready(withCert));
      assert.equal(await flagOn(withCert, 'tls-flag'), true);
      await stopAndCheck(withCert);

      const without = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: tlsUrl, LOG_LEVEL: 'warn' });
      others.push(without);
      await within(SLOW, 'the refusal is logged', async () => /cannot connect to localhost:\d+: .*(TLS|closed)/.test(without.stderr()));
      assert.equal(await ready(without), false);
      await stopAndCheck(without);
    } finally {
      await redisCommand(redis.port, 'CONFIG', 'SET', 'tls-auth-clients', 'no');
    }
  });

  test('a CA that did not sign the certificate: not ready, and the log says why', async () => {
    const url = tlsUrl.replace(enc(certs.ca), enc(certs.wrongCa));
    const f = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: url, LOG_LEVEL: 'warn' });
    others.push(f);
    await within(SLOW, 'the log names the certificate', async () => /certificate is not accepted: The certificate is not correctly signed by the trusted CA/.test(f.stderr()));
    assert.equal(await ready(f), false);
    assert.doesNotMatch(f.stderr(), new RegExp(enc(PASS).replace(/%/g, '%')));
    await stopAndCheck(f);
  });

  test('a wrong password: not ready, WRONGPASS in the log, no crash', async () => {
    const url = tlsUrl.replace(enc(PASS), 'not-the-password');
    const f = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: url, LOG_LEVEL: 'warn' });
    others.push(f);
    await within(SLOW, 'the log says WRONGPASS', async () => /handshake: WRONGPASS/.test(f.stderr()));
    assert.equal(await ready(f), false);
    assert.doesNotMatch(f.stderr(), /not-the-password/);
    await stopAndCheck(f);
  });

  test('a bad REDIS_URL stops the service at start with the reason', async () => {
    const r = await run(FLAGS, [], { env: { ...process.env, FLAGS_PORT: '0', PORT: '0', REDIS_URL: `rediss://h?ssl_cert_reqs=maybe&password=hunter2` } })
      .then(() => ({ code: 0, stderr: '' }), (e) => e);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /ssl_cert_reqs must be required or none/);
    assert.doesNotMatch(r.stderr, /hunter2/);
  });

  test('the services stop cleanly after all that (leak-free in the sanitizer tree)', async () => {
    await stopAndCheck(flags);
    await stopAndCheck(api);
    flags = api = undefined;
  });
});
