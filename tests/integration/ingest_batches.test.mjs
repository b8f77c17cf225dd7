// ingest_batches.test.mjs - a batch is written whole or not at all.
//
// Against the real parts (redis-server; librdkafka's mock cluster as its own
// broker process), queue on Kafka then on Redis Streams:
//   - a legal batch larger than the queue's in-flight window (150,000
//     events, the reproduction of issue 10) is answered 200 and every event
//     is queued exactly once, with the uuid the client sent;
//   - concurrent batches are each all or nothing;
//   - while the queue is down, a batch is refused at once with 503 and
//     Retry-After (not held for QUEUE_TIMEOUT), and the refusals are logged
//     once a second with a count, not once per request.
// Redis only, where the test can stop the server for a while:
//   - a saturated queue refuses the next batch whole, before writing any of
//     it, and the admitted ones complete once the server runs again;
//   - a queue that fails in the middle of a batch is the one partial write
//     left: the client's retry writes the batch again, and since every copy
//     keeps the client's uuid the set of distinct uuids is exactly the batch.
// Events are counted by the first 8 characters of their uuid, which each
// test sets per batch (kafka_dump's SUMMARY mode; a Lua script on Redis).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { sleep } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const INGEST = path.join(BUILD, 'bin/ingest');
const BROKER = path.join(BUILD, 'tests/support/kafka_broker');
const DUMP = path.join(BUILD, 'tests/support/kafka_dump');
const TOPIC = 'batches';
const TOKEN = 'phc_batches';

// uuid of event i of batch `tag` (8 hex digits): counted by that prefix.
const uuidOf = (tag, i) => `${tag}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

function batchBody(tag, n) {
  const now = new Date().toISOString();
  const events = new Array(n);
  for (let i = 0; i < n; i++) events[i] = { event: 'e', distinct_id: `u${i % 997}`, uuid: uuidOf(tag, i), properties: { i }, timestamp: now };
  return zlib.gzipSync(JSON.stringify({ api_key: TOKEN, batch: events }));
}

// Counts per uuid prefix on Redis, computed by the server (a stream of
// 150,000 entries is too much to ship to the test).
const COUNT_LUA = `
local seen, by, total, distinct = {}, {}, 0, 0
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 'h:uuid' then
      local u = f[i + 1]
      total = total + 1
      if not seen[u] then seen[u] = true; distinct = distinct + 1 end
      local p = string.sub(u, 1, 8)
      by[p] = (by[p] or 0) + 1
    end
  end
end
local out = {total, distinct}
for p, n in pairs(by) do table.insert(out, p); table.insert(out, n) end
return out`;

function backendSuite(backend) {
  describe(`batches with the queue on ${backend}`, () => {
    let redis;
    let broker;
    let ingest;
    let base;
    const env = {};

    before(async () => {
      redis = await startRedis(0);
      env.REDIS_URL = redis.url;
      if (backend === 'kafka') {
        // The mock broker keeps about 5 MB per partition (older message sets are
        // dropped): 64 partitions hold every batch of this file.
        broker = await startServer(BROKER, { TOPICS: TOPIC, PARTITIONS: '64' });
        env.KAFKA_BROKERS = `127.0.0.1:${broker.port}`;
      }
      ingest = await startServer(INGEST, { INGEST_PORT: '0', LOG_LEVEL: 'warn', KAFKA_TOPIC: TOPIC, QUEUE_TIMEOUT: '10s', ...env });
      base = `http://127.0.0.1:${ingest.port}`;
      for (let i = 0; i < 200; i++) {
        const r = await fetch(`${base}/_ready`).catch(() => null);
        if (r && r.status === 200) return;
        await sleep(25);
      }
      throw new Error('ingest never became ready');
    });

    after(async () => {
      if (ingest) {
        const { code } = await ingest.stop();
        assert.equal(code, 0, `ingest exit ${code}: ${ingest.stderr()}`);
      }
      if (broker) await broker.stop();
      if (redis) {
        await redis.stop();
        redis.remove();
      }
    });

    async function counts() {
      if (backend === 'kafka') {
        const { stdout } = await run(DUMP, [], { env: { ...process.env, BOOTSTRAP: env.KAFKA_BROKERS, TOPICS: TOPIC, IDLE_MS: '4000', SUMMARY: '1' } });
        const s = JSON.parse(stdout);
        return { total: s.messages, distinct: s.distinct_uuids, by: s.by_prefix };
      }
      const r = await redisCommand(redis.port, 'EVAL', COUNT_LUA, '1', TOPIC);
      const by = {};
      for (let i = 2; i < r.length; i += 2) by[r[i]] = Number(r[i + 1]);
      return { total: Number(r[0]), distinct: Number(r[1]), by };
    }

    async function post(body, signal) {
      const res = await fetch(`${base}/batch/`, { method: 'POST', body, headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' }, signal });
      const text = await res.text();
      return { status: res.status, text, retryAfter: res.headers.get('retry-after') };
    }

    async function metric(name) {
      const text = await (await fetch(`${base}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(name) && !l.startsWith('#'));
      return line ? Number(line.split(' ').pop()) : 0;
    }

    test('a batch of 150,000 events, larger than the in-flight window, is answered 200 and queued whole, once', async () => {
      const r = await post(batchBody('b1500000', 150000));
      assert.equal(r.status, 200, r.text);
      const c = await counts();
      assert.equal(c.by.b1500000, 150000);
      assert.equal(c.total, c.distinct, 'no event was written twice');
    });

    test('five concurrent batches of 30,000: each is answered 200 with all its events, or 503 with none', async () => {
      const tags = ['c0000000', 'c1000000', 'c2000000', 'c3000000', 'c4000000'];
      const bodies = tags.map((t) => batchBody(t, 30000));
      const answers = await Promise.all(bodies.map((b) => post(b)));
      const c = await counts();
      for (let k = 0; k < tags.length; k++) {
        const got = c.by[tags[k]] || 0;
        if (answers[k].status === 200) assert.equal(got, 30000, `batch ${k} answered 200`);
        else {
          assert.equal(answers[k].status, 503, answers[k].text);
          assert.equal(got, 0, `batch ${k} answered 503 and wrote ${got} events`);
        }
      }
      // A healthy queue takes them all: the backlog admits up to 250,000.
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200]);
    });

    test('while the queue is down: 503 with Retry-After at once, refusals logged once a second with a count', async () => {
      if (backend === 'kafka') broker.child.kill('SIGUSR1');
      else await redis.stop();
      try {
        // Known down: the Kafka producer's news of its brokers, the Redis
        // client's lost connection.
        // Until it knows, a request is admitted and waits for the queue's
        // own timeout: wait for /_ready to say so first.
        for (let i = 0; i < 200; i++) {
          const r = await fetch(`${base}/_ready`);
          await r.text();
          if (r.status === 503) break;
          await sleep(50);
        }
        let first;
        for (let i = 0; i < 100; i++) {
          first = await post(batchBody('d0000000', 2), AbortSignal.timeout(15000)).catch((e) => ({ status: 0, text: String(e) }));
          if (first.status === 503) break;
          await sleep(100);
        }
        assert.equal(first.status, 503, first.text);
        const logBefore = ingest.stderr().split('\n').filter((l) => l.includes('capture refused')).length;
        const t0 = Date.now();
        for (let i = 0; i < 200; i++) {
          // Far sooner than QUEUE_TIMEOUT (10 s): the request is not held.
          const r = await post(batchBody('d1000000', 2), AbortSignal.timeout(5000));
          assert.equal(r.status, 503, r.text);
          assert.equal(JSON.parse(r.text).code, 'queue_unavailable');
          assert.ok(Number(r.retryAfter) >= 1, `Retry-After: ${r.retryAfter}`);
        }
        const seconds = (Date.now() - t0) / 1000;
        const lines = ingest.stderr().split('\n').filter((l) => l.includes('capture refused'));
        const added = lines.length - logBefore;
        assert.ok(added <= Math.ceil(seconds) + 1, `${added} refusal lines in ${seconds} s for 200 refusals`);
        assert.match(lines[lines.length - 1], /\d+ more refused since the last line/);
        assert.ok((await metric('ingest_requests_refused_total')) >= 200);
      } finally {
        if (backend === 'kafka') broker.child.kill('SIGUSR2');
        else redis = await startRedis(redis.port);
      }
      let back = false;
      for (let i = 0; i < 80 && !back; i++) {
        back = (await post(batchBody('d2000000', 2))).status === 200;
        if (!back) await sleep(250);
      }
      assert.ok(back, 'accepted again after the queue came back');
      const c = await counts();
      assert.equal(c.by.d1000000 || 0, 0, 'nothing of a refused batch was written');
    });

    if (backend !== 'redis') return;

    test('a saturated queue refuses the next batch whole, before writing any of it', async () => {
      // Stopped, Redis answers nothing: 10,000 XADDs fill the batch window,
      // the rest wait in the backlog, which admits batches while fewer than
      // 250,000 messages wait.
      redis.child.kill('SIGSTOP');
      let a;
      let b;
      try {
        const pa = post(batchBody('a0000000', 150000));
        const settled = async (inFlight, waiting) => {
          for (let i = 0; i < 400; i++) {
            if ((await metric('queue_messages_in_flight')) === inFlight && (await metric('queue_messages_waiting')) === waiting) return true;
            await sleep(25);
          }
          return false;
        };
        assert.ok(await settled(10000, 140000), 'the first batch fills the window, the rest waits');
        const pb = post(batchBody('a1000000', 120000));
        assert.ok(await settled(10000, 260000), 'the second batch is admitted and waits whole');
        const refused = await post(batchBody('a2000000', 10), AbortSignal.timeout(5000));
        assert.equal(refused.status, 503, refused.text);
        assert.ok(Number(refused.retryAfter) >= 1);
        redis.child.kill('SIGCONT');
        [a, b] = await Promise.all([pa, pb]);
      } finally {
        redis.child.kill('SIGCONT');
      }
      assert.equal(a.status, 200, a.text);
      assert.equal(b.status, 200, b.text);
      const c = await counts();
      assert.equal(c.by.a0000000, 150000);
      assert.equal(c.by.a1000000, 120000);
      assert.equal(c.by.a2000000 || 0, 0);
    });

    test('a queue that fails mid-batch is the only partial write; the retry keeps the client uuids, so copies can be dropped', async () => {
      const body = batchBody('f0000000', 150000);
      const before = Number(await redisCommand(redis.port, 'XLEN', TOPIC));
      const pending = post(body);
      // Cut every client connection once part of the batch is stored.
      for (let i = 0; i < 2000; i++) {
        if (Number(await redisCommand(redis.port, 'XLEN', TOPIC)) - before >= 10000) break;
        await sleep(2);
      }
      await redisCommand(redis.port, 'CLIENT', 'KILL', 'TYPE', 'normal');
      const first = await pending;
      const c1 = await counts();
      const written = c1.by.f0000000 || 0;
      assert.equal(first.status, 503, `${first.text} (written ${written})`);
      assert.ok(written > 0 && written < 150000, `partly written: ${written}`);
      // The client retries the same request until it is accepted.
      let retry;
      for (let i = 0; i < 40; i++) {
        retry = await post(body);
        if (retry.status === 200) break;
        await sleep(250);
      }
      assert.equal(retry.status, 200, retry.text);
      const c2 = await counts();
      const copies = c2.by.f0000000;
      assert.ok(copies >= 150000 + written && copies < 300000, `copies ${copies}`);
      // Every copy is a duplicate by uuid: deduplicated, the batch is exact.
      assert.equal(c2.total - c2.distinct, copies - 150000);
    });
  });
}

backendSuite('kafka');
backendSuite('redis');
