// edge.test.mjs - the nginx edges. The `make run` edge helper leaves nothing
// behind: after stop(), neither its master nor any of its workers is running
// (a master killed with SIGKILL left its workers running and listening, nine
// per `make test`). The compose stacks' edge re-resolves the services' names
// (variables in proxy_pass, a resolver: `--scale` is followed), passes
// `nginx -t` with a throwaway certificate, and, run here against local
// upstreams, routes requests over TLS with their URIs intact and redirects
// plain HTTP to https.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startEdge, workerPids } from './lib/edge.mjs';
import { checkConfig, makeCertificate, startComposeEdge } from './lib/compose_edge.mjs';
import { ROOT } from './lib/proc.mjs';

// Alive and still an nginx (a PID could be reused by something else).
function nginxAlive(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nginx') &&
      !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

test('stopping the edge stops its master and every worker', async () => {
  const edge = await startEdge({});
  const workers = workerPids(edge.pid);
  assert.ok(workers.length >= 1, 'nginx started at least one worker');
  for (const pid of [edge.pid, ...workers]) assert.ok(nginxAlive(pid), `nginx ${pid} runs`);
  await edge.stop();
  // The master waits for its workers before it exits: nothing to wait for.
  const left = [edge.pid, ...workers].filter(nginxAlive);
  assert.deepEqual(left, [], `nginx processes left running: ${left.join(' ')}`);
  const again = await fetch(edge.url).then(() => 'answered', () => 'refused');
  assert.equal(again, 'refused', 'nothing listens on the edge port any more');
});

// ---- the compose stacks' edge (deploy/compose/edge.conf, edge-http.conf) ----

const COMPOSE = path.join(ROOT, 'deploy/compose');
const read = (f) => fs.readFileSync(path.join(COMPOSE, f), 'utf8');
const directives = (text, name) => [...text.replace(/#.*$/gm, '').matchAll(new RegExp(`(?:^|[;{\\s])${name}\\s+([^;{}]+);`, 'g'))].map((m) => m[1].trim());

test('the compose edge re-resolves its upstreams: every proxy_pass a variable naming a compose service, a resolver, no upstream {}', () => {
  const routes = read('edge-routes.conf');
  const passes = directives(routes, 'proxy_pass');
  assert.equal(passes.length, 3);
  const sets = new Map(directives(routes, 'set').map((s) => s.split(/\s+/)));
  // the services and ports the compose stacks run (docker-compose config)
  const stack = YAML.parse(execFileSync('docker-compose', ['-f', path.join(COMPOSE, 'full.yml'), 'config']).toString()).services;
  const targets = [];
  for (const p of passes) {
    assert.match(p, /^\$[a-z_]+$/, `proxy_pass ${p}: a variable, resolved per request`);
    const url = sets.get(p);
    assert.ok(url, `${p} is set in edge-routes.conf`);
    const m = url.match(/^http:\/\/([a-z]+):(\d+)$/); // no URI part: the client's URI is passed on as sent
    assert.ok(m, `${p} = ${url}`);
    const [, svc, port] = m;
    assert.ok(stack[svc], `${svc} is a compose service`);
    assert.equal(stack[svc].environment[`${svc.toUpperCase()}_PORT`], port, `${svc} listens on ${port}`);
    targets.push(svc);
  }
  assert.deepEqual(targets.sort(), ['api', 'flags', 'ingest']);
  for (const conf of ['edge.conf', 'edge-http.conf']) {
    const text = read(conf);
    assert.doesNotMatch(text.replace(/#.*$/gm, ''), /\bupstream\s+\w+\s*\{/, `${conf}: names in upstream {} are resolved once`);
    const [resolver] = directives(text, 'resolver');
    assert.match(resolver ?? '', /^127\.0\.0\.11 valid=\d+s/, `${conf}: Docker's DNS, asked again`);
    assert.match(text, /include \/etc\/nginx\/edge-routes\.conf;/);
    assert.deepEqual(directives(text, 'proxy_pass'), [], `${conf}: routes only in edge-routes.conf`);
  }
});

test("make run's edge names no host to resolve (loopback addresses only)", () => {
  const text = fs.readFileSync(path.join(ROOT, 'deploy/nginx/edge.conf.template'), 'utf8');
  const servers = directives(text, 'server');
  assert.equal(servers.length, 3);
  for (const s of servers) assert.match(s, /^127\.0\.0\.1:@[A-Z]+_PORT@/);
});

describe('the compose edge over TLS', () => {
  let certs, ca, upstreams = [];
  const seen = [];
  before(async () => {
    certs = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-edge-certs-'));
    ca = makeCertificate(certs);
    for (const name of ['ingest', 'flags', 'api']) {
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => { body += c; });
        req.on('end', () => {
          seen.push(name);
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ service: name, method: req.method, url: req.url, host: req.headers.host, proto: req.headers['x-forwarded-proto'], body }));
        });
      });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      upstreams.push({ name, server, port: server.address().port });
    }
  });
  after(async () => {
    for (const u of upstreams) await new Promise((r) => u.server.close(r));
    fs.rmSync(certs, { recursive: true, force: true });
  });
  const ports = () => Object.fromEntries(upstreams.map((u) => [u.name, u.port]));

  test('nginx -t accepts both edge files with a throwaway certificate, and refuses edge.conf without one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-edge-t-'));
    try {
      fs.cpSync(certs, path.join(dir, 'certs'), { recursive: true });
      for (const conf of ['edge.conf', 'edge-http.conf']) {
        const r = checkConfig(dir, conf, { ...ports(), tls: 1443, plain: 1080 });
        assert.equal(r.status, 0, `${conf}: ${r.output}`);
        assert.match(r.output, /test is successful/);
      }
      fs.rmSync(path.join(dir, 'certs'), { recursive: true });
      const r = checkConfig(dir, 'edge.conf', { ...ports(), tls: 1443, plain: 1080 });
      assert.notEqual(r.status, 0);
      assert.match(r.output, /tls\.crt/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a request over TLS reaches its service with the URI as sent; plain HTTP redirects to https', async () => {
    const edge = await startComposeEdge('edge.conf', ports(), certs);
    try {
      const cases = [
        ['POST', '/i/v0/e/?ip=1&_=1700000000000&ver=1.2.3', 'ingest'],
        ['POST', '/capture', 'ingest'],
        ['POST', '/batch/', 'ingest'],
        ['POST', '/flags/?v=2&config=true', 'flags'],
        ['GET', '/api/projects/%40current/?a=b%20c', 'api'],
        ['GET', '/eventsx', 'api'], // not a capture path: /e only as a whole segment
        ['GET', '/_health', 'api'],
      ];
      for (const [method, uri, service] of cases) {
        const r = await request({ tls: true, port: edge.tls, method, path: uri, ca, body: method === 'POST' ? '{"x":1}' : undefined });
        assert.equal(r.status, 200, `${method} ${uri}: ${r.body}`);
        const got = JSON.parse(r.body);
        assert.equal(got.service, service, `${uri} routed to ${service}`);
        assert.equal(got.url, uri);
        assert.equal(got.method, method);
        assert.equal(got.proto, 'https');
        assert.equal(got.host, 'localhost');
        if (method === 'POST') assert.equal(got.body, '{"x":1}');
      }
      const r = await request({ tls: false, port: edge.plain, method: 'POST', path: '/capture/?x=1', body: '{}' });
      assert.equal(r.status, 308);
      assert.equal(r.headers.location, 'https://localhost/capture/?x=1');
      assert.equal(seen.filter((s) => s === 'ingest').length, 3, 'the redirect reached no service');
      // an untrusted certificate is refused: the client really checks it
      await assert.rejects(request({ tls: true, port: edge.tls, method: 'GET', path: '/', ca: undefined }), /self[- ]signed|unable to verify/i);
    } finally {
      await edge.stop();
    }
  });

  test("the laptop's plain-HTTP edge (edge-http.conf) routes the same", async () => {
    const edge = await startComposeEdge('edge-http.conf', ports());
    try {
      for (const [uri, service] of [['/e/?compression=gzip-js', 'ingest'], ['/flags?v=2', 'flags'], ['/api/users/@me/', 'api']]) {
        const r = await request({ tls: false, port: edge.plain, method: 'GET', path: uri });
        assert.equal(r.status, 200);
        const got = JSON.parse(r.body);
        assert.equal(got.service, service);
        assert.equal(got.url, uri);
        assert.equal(got.proto, 'http');
      }
    } finally {
      await edge.stop();
    }
  });
});

function request({ tls, port, method, path: uri, ca, body }) {
  return new Promise((resolve, reject) => {
    const mod = tls ? https : http;
    const req = mod.request({ host: '127.0.0.1', port, method, path: uri, ca, servername: 'localhost', headers: { host: 'localhost' } }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
