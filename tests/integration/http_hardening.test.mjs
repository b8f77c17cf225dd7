// http_hardening.test.mjs - what an outsider can send any service over raw
// TCP: protocol switches (WebSocket and h2c upgrades, CONNECT, an upgrade
// with a request pipelined behind it) and requests RFC 9112 says to refuse.
// Each case is one write, so the server sees the trailing bytes in the same
// read as the request: that is what used to crash both services (a request
// parsed with no request open after llhttp's upgrade pause).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { connect } from './lib/rawhttp.mjs';

// Requests that switch protocols: the server answers the request itself as
// an ordinary one and closes, without reading past it.
const SWITCHES = [
  ['a WebSocket upgrade with a trailing byte',
    'GET /_health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
    'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\nX', 200],
  ['CONNECT with a trailing byte',
    'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nX', 405],
  ['an h2c upgrade followed by the HTTP/2 preface',
    'GET /_health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n' +
    'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\nPRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 200],
  ['an upgrade with a request pipelined behind it',
    'GET /_health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n' +
    'GET /_health HTTP/1.1\r\nHost: x\r\n\r\n', 200],
];

// Requests RFC 9112 lets (or tells) a server refuse, with the status expected.
const STRICT = [
  ['whitespace between a header name and its colon', 'GET /_health HTTP/1.1\r\nHost : x\r\n\r\n', 400],
  ['obs-fold continuation of a header value', 'GET /_health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n', 400],
  ['an HTTP/0.9 request line', 'GET /_health\r\n\r\n', 400],
  ['HTTP/2.0 in an HTTP/1 request line', 'GET /_health HTTP/2.0\r\nHost: x\r\n\r\n', 505],
  ['the HTTP/2 connection preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 505],
];

async function exchange(port, bytes) {
  const c = await connect(port);
  c.write(bytes);
  const r = await c.response();
  const closed = await c.waitClose(3000);
  const rest = c.buf.toString('latin1');
  c.destroy();
  return { r, closed, rest };
}

async function assertAlive(svc, port) {
  assert.equal(svc.child.exitCode, null, `exited: ${svc.stderr()}`);
  assert.equal(svc.child.signalCode, null, `killed by ${svc.child.signalCode}: ${svc.stderr()}`);
  const res = await fetch(`http://127.0.0.1:${port}/_health`);
  assert.equal(res.status, 200);
}

let redis;
const services = {};

before(async () => {
  redis = await startRedis();
  const common = { REDIS_URL: redis.url, LOG_LEVEL: 'error' };
  services.ingest = await startServer(path.join(BUILD, 'bin/ingest'), { ...common, INGEST_PORT: '0' });
  services.flags = await startServer(path.join(BUILD, 'bin/flags'), { ...common, FLAGS_PORT: '0' });
});

after(async () => {
  for (const s of Object.values(services)) {
    const { code } = await s.stop();
    assert.equal(code, 0, s.stderr());
  }
  await redis.stop();
});

for (const name of ['ingest', 'flags']) {
  describe(`${name}: protocol switches and strict HTTP/1.1`, () => {
    for (const [what, bytes, status] of SWITCHES) {
      test(`${what}: answered once, then closed, and the process lives on`, async () => {
        const svc = services[name];
        const { r, closed, rest } = await exchange(svc.port, bytes);
        assert.equal(r.status, status, r.text);
        assert.equal(r.headers.connection, 'close');
        if (status !== 200) assert.equal(typeof r.json().detail, 'string');
        assert.ok(closed, 'the connection stays open after a protocol switch');
        assert.equal(rest, '', 'something was parsed after the switch');
        await assertAlive(svc, svc.port);
      });
    }
    for (const [what, bytes, status] of STRICT) {
      test(`${what}: ${status} with a JSON error, then closed`, async () => {
        const svc = services[name];
        const { r, closed } = await exchange(svc.port, bytes);
        assert.equal(r.status, status, r.text);
        assert.equal(r.json().type !== undefined, true);
        assert.equal(typeof r.json().detail, 'string');
        assert.ok(closed);
        await assertAlive(svc, svc.port);
      });
    }
    test('a header split across reads is still accepted (not taken for obs-fold)', async () => {
      const svc = services[name];
      const c = await connect(svc.port);
      for (const part of ['GET /_health HTTP/1.1\r\nHost: x\r\nX-Long: abc', 'def', '\r\nX-Empty:', ' ', 'v\r\n\r\n']) {
        c.write(part);
        await new Promise((res) => setTimeout(res, 20));
      }
      const r = await c.response();
      assert.equal(r.status, 200);
      assert.equal(r.headers.connection, 'keep-alive');
      c.destroy();
    });
  });
}
