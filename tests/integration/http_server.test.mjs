// http_server.test.mjs - libcommon's HTTP/1.1 server, driven over real
// sockets through tests/support/example_server.c.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { connect, sleep } from './lib/rawhttp.mjs';

const BIN = path.join(BUILD, 'tests/support/example_server');
let srv;

before(async () => {
  srv = await startServer(BIN, { MAX_BODY: '64KiB', MAX_HEADER: '8KiB', HEADER_TIMEOUT: '1s', BODY_TIMEOUT: '700ms', IDLE_TIMEOUT: '1500ms' });
});
after(async () => {
  const { code } = await srv.stop();
  assert.equal(code, 0, `server exit code ${code}: ${srv.stderr()}`);
});

function assertJsonError(res, status, code) {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers['content-type'], /application\/json/);
  const body = res.json();
  assert.equal(body.code, code);
  assert.equal(typeof body.type, 'string');
  assert.equal(typeof body.detail, 'string');
  assert.ok('attr' in body);
}

test('GET with keep-alive serves several requests on one connection', async () => {
  const c = await connect(srv.port);
  for (let i = 0; i < 3; i++) {
    c.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
    const r = await c.response();
    assert.equal(r.status, 200);
    assert.equal(r.text, 'hello');
    assert.equal(r.headers.connection, 'keep-alive');
    assert.ok(r.headers.date);
    assert.equal(r.headers['content-length'], '5');
  }
  c.destroy();
});

test('pipelined requests are answered in order, even when the first is slow', async () => {
  const c = await connect(srv.port);
  c.write('GET /slow?ms=150 HTTP/1.1\r\nHost: x\r\n\r\n' +
    'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n' +
    'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc' +
    'GET /items/42 HTTP/1.1\r\nHost: x\r\n\r\n');
  const r1 = await c.response();
  const r2 = await c.response();
  const r3 = await c.response();
  const r4 = await c.response();
  assert.deepEqual(r1.json(), { slow: true });
  assert.equal(r2.text, 'hello');
  assert.equal(r3.text, 'abc');
  assert.deepEqual(r4.json(), { id: '42' });
  c.destroy();
});

test('a request split into single bytes is parsed correctly', async () => {
  const c = await connect(srv.port);
  const req = 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello';
  for (const ch of req) c.write(ch);
  const r = await c.response();
  assert.equal(r.text, 'hello');
  c.destroy();
});

test('chunked request bodies are decoded, across writes', async () => {
  const c = await connect(srv.port);
  c.write('POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
  await sleep(50);
  c.write('7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n');
  const r = await c.response();
  assert.equal(r.status, 200);
  assert.equal(r.text, 'hello, world');
  assert.equal(r.headers['x-body-length'], '12');
  c.destroy();
});

test('Expect: 100-continue gets an interim 100 before the body is sent', async () => {
  const c = await connect(srv.port);
  c.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n');
  const interim = await c.response();
  assert.equal(interim.status, 100);
  c.write('data');
  const r = await c.response();
  assert.equal(r.status, 200);
  assert.equal(r.text, 'data');
  c.destroy();
});

test('Expect: 100-continue with a body over the limit gets 413 and no 100', async () => {
  const c = await connect(srv.port);
  c.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n');
  const r = await c.response();
  assertJsonError(r, 413, 'payload_too_large');
  assert.equal(r.headers.connection, 'close');
  assert.ok(await c.waitClose());
});

test('an unsupported Expect gets 417', async () => {
  const c = await connect(srv.port);
  c.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: teapot\r\n\r\nx');
  assertJsonError(await c.response(), 417, 'expectation_failed');
  c.destroy();
});

test('Content-Length over the body limit gets 413 and the connection closes cleanly', async () => {
  const c = await connect(srv.port);
  const body = Buffer.alloc(100 * 1024, 'a');
  c.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`);
  c.write(body);
  const r = await c.response();
  assertJsonError(r, 413, 'payload_too_large');
  assert.ok(await c.waitClose());
});

test('a chunked body growing over the limit gets 413', async () => {
  const c = await connect(srv.port);
  c.write('POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
  const chunk = Buffer.alloc(16 * 1024, 'b');
  for (let i = 0; i < 6 && !c.closed; i++) {
    c.write(`${chunk.length.toString(16)}\r\n`);
    c.write(chunk);
    c.write('\r\n');
  }
  assertJsonError(await c.response(), 413, 'payload_too_large');
  c.destroy();
});

test('a body exactly at the limit is accepted', async () => {
  const c = await connect(srv.port);
  const body = Buffer.alloc(64 * 1024, 'z');
  c.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`);
  c.write(body);
  const r = await c.response();
  assert.equal(r.status, 200);
  assert.equal(r.body.length, body.length);
  c.destroy();
});

test('a header section over the limit gets 431', async () => {
  const c = await connect(srv.port);
  c.write(`GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(10000)}\r\n\r\n`);
  assertJsonError(await c.response(), 431, 'headers_too_large');
  assert.ok(await c.waitClose());
});

test('too many headers gets 431', async () => {
  const c = await connect(srv.port);
  let req = 'GET /hello HTTP/1.1\r\nHost: x\r\n';
  for (let i = 0; i < 150; i++) req += `X-H${i}: v\r\n`;
  c.write(req + '\r\n');
  assertJsonError(await c.response(), 431, 'too_many_headers');
  c.destroy();
});

test('a request target over the limit gets 414', async () => {
  const c = await connect(srv.port);
  c.write(`GET /hello?${'q'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertJsonError(await c.response(), 414, 'uri_too_long');
  c.destroy();
});

test('malformed requests get 400 with a JSON error', async () => {
  for (const bad of ['GARBAGE\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /hello HTTP/1.1\r\nBad Header\r\n\r\n',
    'POST /echo HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
    'POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n']) {
    const c = await connect(srv.port);
    c.write(bad);
    const r = await c.response();
    assertJsonError(r, 400, 'malformed_request');
    assert.ok(await c.waitClose(), `closed after ${JSON.stringify(bad)}`);
  }
});

test('headers that stall get 408 (slowloris)', async () => {
  const c = await connect(srv.port);
  const t0 = Date.now();
  // Trickle one byte every 100 ms: the header deadline is absolute.
  const req = 'GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  let i = 0;
  const iv = setInterval(() => { if (!c.closed && i < req.length) c.write(req[i++]); }, 100);
  const r = await c.response(5000);
  clearInterval(iv);
  assertJsonError(r, 408, 'request_timeout');
  const elapsed = Date.now() - t0;
  assert.ok(elapsed >= 900 && elapsed < 4000, `408 after ${elapsed} ms`);
  assert.ok(await c.waitClose());
});

test('a body that stalls gets 408', async () => {
  const c = await connect(srv.port);
  c.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab');
  const r = await c.response(5000);
  assertJsonError(r, 408, 'request_timeout');
});

test('an idle keep-alive connection is closed after the idle timeout', async () => {
  const c = await connect(srv.port);
  c.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
  await c.response();
  const t0 = Date.now();
  assert.ok(await c.waitClose(5000));
  const elapsed = Date.now() - t0;
  assert.ok(elapsed >= 1200, `closed after ${elapsed} ms`);
});

test('one connection sending garbage does not disturb another mid-request', async () => {
  const good = await connect(srv.port);
  good.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nfir');
  const bad = await connect(srv.port);
  bad.write('\x00\x01\x02 NOT HTTP\r\n\r\n');
  assertJsonError(await bad.response(), 400, 'malformed_request');
  good.write('st!');
  const r = await good.response();
  assert.equal(r.text, 'first!');
  good.destroy();
});

test('404 and 405 carry JSON errors; 405 lists Allow', async () => {
  const c = await connect(srv.port);
  c.write('GET /nope HTTP/1.1\r\nHost: x\r\n\r\n');
  assertJsonError(await c.response(), 404, 'not_found');
  c.write('DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n');
  const r = await c.response();
  assertJsonError(r, 405, 'method_not_allowed');
  assert.equal(r.headers.allow, 'GET, HEAD');
  c.destroy();
});

test('route parameters, and literal segments win over parameters', async () => {
  const c = await connect(srv.port);
  c.write('GET /items/abc-1 HTTP/1.1\r\nHost: x\r\n\r\nGET /items/special HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.deepEqual((await c.response()).json(), { id: 'abc-1' });
  assert.deepEqual((await c.response()).json(), { special: true });
  c.destroy();
});

test('HEAD answers headers only', async () => {
  const c = await connect(srv.port);
  c.write('HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
  await c.until(() => c.buf.includes('hello'));
  const text = c.buf.toString();
  const first = text.slice(0, text.indexOf('\r\n\r\n'));
  assert.match(first, /^HTTP\/1\.1 200/);
  assert.match(first, /Content-Length: 5/);
  // The next bytes are the GET's status line, not a body.
  assert.ok(text.slice(first.length + 4).startsWith('HTTP/1.1 200'));
  c.destroy();
});

test('HTTP/1.0 without keep-alive is answered and closed', async () => {
  const c = await connect(srv.port);
  c.write('GET /hello HTTP/1.0\r\n\r\n');
  const r = await c.response();
  assert.equal(r.text, 'hello');
  assert.equal(r.headers.connection, 'close');
  assert.ok(await c.waitClose());
});

test('CORS: Origin mirrored with credentials; preflight answered', async () => {
  const c = await connect(srv.port);
  c.write('GET /hello HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example.com\r\n\r\n');
  let r = await c.response();
  assert.equal(r.headers['access-control-allow-origin'], 'https://app.example.com');
  assert.equal(r.headers['access-control-allow-credentials'], 'true');
  c.write('OPTIONS /echo HTTP/1.1\r\nHost: x\r\nOrigin: https://a.test\r\nAccess-Control-Request-Method: POST\r\n' +
    'Access-Control-Request-Headers: content-type, x-custom\r\n\r\n');
  r = await c.response();
  assert.equal(r.status, 200);
  assert.deepEqual(r.json(), { status: 'Ok' });
  assert.equal(r.headers['access-control-allow-origin'], 'https://a.test');
  assert.equal(r.headers['access-control-allow-headers'], 'content-type, x-custom');
  assert.match(r.headers['access-control-allow-methods'], /POST/);
  c.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
  r = await c.response();
  assert.equal(r.headers['access-control-allow-origin'], '*');
  c.destroy();
});

test('X-Request-Id: a sane one is kept, otherwise one is made', async () => {
  // The id is used in logs; the example server's errors expose nothing of it,
  // so this checks the request is served either way (no crash on odd ids).
  const c = await connect(srv.port);
  c.write('GET /hello HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc-123\r\n\r\n');
  assert.equal((await c.response()).status, 200);
  c.write(`GET /hello HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${'"'.repeat(100)}\r\n\r\n`);
  assert.equal((await c.response()).status, 200);
  c.destroy();
});

test('many pipelined requests written without reading: backpressure, then all answered', async () => {
  const c = await connect(srv.port);
  const n = 3000;
  const body = 'x'.repeat(1000);
  let all = '';
  for (let i = 0; i < n; i++) all += `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  c.socket.pause();
  c.write(all);
  await sleep(300);
  c.socket.resume();
  for (let i = 0; i < n; i++) {
    const r = await c.response(10000);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, body.length);
  }
  c.destroy();
});

test('/_health, /_ready and /metrics', async () => {
  const c = await connect(srv.port);
  c.write('GET /_health HTTP/1.1\r\nHost: x\r\n\r\nGET /_ready HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.deepEqual((await c.response()).json(), { status: 'ok' });
  assert.deepEqual((await c.response()).json(), { status: 'ready' });
  const m = await c.response();
  assert.match(m.headers['content-type'], /text\/plain/);
  assert.match(m.text, /# TYPE http_requests_total counter/);
  assert.match(m.text, /http_requests_total\{service="example",route="\/hello",code="2xx"\} \d+/);
  assert.match(m.text, /http_request_duration_seconds_bucket\{service="example",route="\/echo",le="\+Inf"\} \d+/);
  assert.match(m.text, /process_resident_memory_bytes \d+/);
  c.destroy();
});

test('a client that half-closes after its request still gets a slow answer', async () => {
  // The write timeout is shorter than the handler: it must not run while
  // the handler still holds the request.
  const own = await startServer(BIN, { WRITE_TIMEOUT: '200ms' });
  try {
    const c = await connect(own.port);
    c.write('GET /slow?ms=600 HTTP/1.1\r\nHost: x\r\n\r\n');
    c.end();
    const r = await c.response(5000).catch((e) => e);
    assert.ok(!(r instanceof Error), `no answer: ${r && r.message}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { slow: true });
    assert.ok(await c.waitClose(), 'closed once the answer has left');
  } finally {
    own.child.kill('SIGTERM');
    await own.exited;
  }
});

test('SIGTERM drains: in-flight requests finish, then the process exits 0', async () => {
  const own = await startServer(BIN, {});
  const busy = await connect(own.port);
  const idle = await connect(own.port);
  busy.write('GET /slow?ms=400 HTTP/1.1\r\nHost: x\r\n\r\n');
  await sleep(50);
  own.child.kill('SIGTERM');
  const r = await busy.response(5000);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json(), { slow: true });
  assert.equal(r.headers.connection, 'close');
  assert.ok(await idle.waitClose(), 'idle connection closed on drain');
  const { code } = await own.exited;
  assert.equal(code, 0);
  await assert.rejects(connect(own.port), 'listener closed after drain');
});

test('--print-config lists the configuration with defaults', async () => {
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(BIN, ['--print-config'], { env: { ...process.env, MAX_BODY: '2MiB' } }).toString();
  assert.match(out, /^MAX_BODY=2MiB/m);
  assert.match(out, /^PORT=0/m);
  assert.match(out, /default: 64KiB/);
});

test('a response header value with CR or LF is refused, never written (no response splitting)', async () => {
  const base = `http://127.0.0.1:${srv.port}`;
  const ok = await fetch(`${base}/redirect`, { method: 'POST', body: 'https://app.example/cb?x=1', redirect: 'manual' });
  assert.equal(ok.status, 302);
  assert.equal(ok.headers.get('location'), 'https://app.example/cb?x=1');
  for (const evil of ['https://app.example/\r\nSet-Cookie: s=1', 'https://app.example/\nX-Injected: 1', 'a\rb']) {
    // Raw socket: read the exact bytes the server sends.
    const c = await connect(srv.port);
    c.write(`POST /redirect HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(evil)}\r\nConnection: close\r\n\r\n${evil}`);
    await c.waitClose();
    const raw = c.buf.toString('latin1');
    assert.match(raw, /^HTTP\/1\.1 302 /);
    const head = raw.split('\r\n\r\n')[0];
    assert.doesNotMatch(head, /Location|Set-Cookie|X-Injected/i, JSON.stringify(head));
  }
  assert.match(srv.stderr(), /response header Location refused/);
});

// cm_http_respond_parts: the parts are offered to the socket where they are;
// what it does not take at once (16 MB to a reader that waits before reading)
// is copied before the handler frees them. The body must arrive whole.
test('a response in parts arrives whole, small or larger than the socket takes at once', async () => {
  const net = await import('node:net');
  for (const size of [0, 10, 16_000_000]) {
    const sock = net.connect(srv.port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.pause();
    sock.write(`GET /parts/${size} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await sleep(size > 1000 ? 300 : 20); // the server meets a full socket buffer
    const chunks = [];
    let got = 0;
    const want = await new Promise((resolve, reject) => {
      let headEnd = -1, total = -1;
      sock.on('data', (d) => {
        chunks.push(d);
        got += d.length;
        if (headEnd < 0) {
          const all = Buffer.concat(chunks);
          headEnd = all.indexOf('\r\n\r\n');
          if (headEnd >= 0) total = headEnd + 4 + Number(/content-length: (\d+)/i.exec(all.subarray(0, headEnd).toString())[1]);
        }
        if (total >= 0 && got >= total) resolve(total);
      });
      sock.on('error', reject);
      sock.resume();
    });
    sock.destroy();
    const all = Buffer.concat(chunks);
    assert.equal(all.length, want);
    const body = all.subarray(all.indexOf('\r\n\r\n') + 4).toString('latin1');
    assert.equal(body.length, size + 2);
    assert.equal(body[0], '<');
    assert.equal(body[body.length - 1], '>');
    let expect = '';
    for (let i = 0; i < size; i++) expect += String.fromCharCode(97 + (i % 26));
    assert.ok(body.slice(1, -1) === expect, `body of ${size} bytes differs`);
  }
});
