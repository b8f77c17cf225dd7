// clickhouse_write_order.test.mjs - the order of a write's statements on
// ClickHouse. A write is not atomic across tables, so its order is what a
// reader can see half-way: the person, distinct-id and group rows go in
// before the events, so an event that can be read has its person rows
// there too (a person looked up by the distinct id of an event just read
// is found, with every id merged into it by that event). A recording
// HTTP proxy sits between the services and a real ClickHouse; events come
// from posthog-node through ingest and the writer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PostHog } from 'posthog-node';
import { openStore } from './lib/evstore.mjs';
import { startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

let store, proxy, s, tmp;
const seen = []; // each request's statement, in the order the proxy got them

// A write's dedup SELECT starts it; the inserts that follow are its own
// (the writer sends one write at a time, each statement after the last
// one's answer).
const DEDUP = 'SELECT concat(toString(project_id)';

function startProxy(target) {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const q = new URL(req.url, 'http://x').searchParams.get('query');
      seen.push((q ?? body.toString('utf8')).slice(0, 120));
      const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
      up.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-order-'));
  store = await openStore('clickhouse', tmp);
  proxy = await startProxy(store.env.CLICKHOUSE_URL);
  const u = new URL(store.env.CLICKHOUSE_URL);
  u.port = String(proxy.address().port);
  s = await startPair({ queue: 'redis', store: 'clickhouse', persons: 'sqlite' }, {
    store: { env: { CLICKHOUSE_URL: u.toString() }, stop: async () => {} },
  });
});

after(async () => {
  await s?.stop();
  await new Promise((r) => (proxy ? proxy.close(r) : r()));
  await store?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test('a write puts the person, distinct-id and group rows in before its events', async () => {
  const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 1, flushInterval: 0 });
  client.capture({ distinctId: 'anon-o', event: '$pageview', properties: { $current_url: 'https://x/' } });
  client.alias({ distinctId: 'user-o', alias: 'anon-o' });
  client.identify({ distinctId: 'user-o', properties: { email: 'o@example.com' } });
  client.groupIdentify({ groupType: 'company', groupKey: 'c-o', properties: { size: 3 } });
  client.capture({ distinctId: 'user-o', event: 'paid', groups: { company: 'c-o' }, properties: { $set: { plan: 'pro' } } });
  await client.shutdown();
  await within(30000, 'the five events stored', async () => (await store.count("distinct_id IN ('anon-o', 'user-o')")) === 4 && (await store.count("event = '$groupidentify'")) === 1);

  // every write, as the statements it sent
  const writes = [];
  for (const q of seen) {
    if (q.startsWith(DEDUP)) writes.push([]);
    else if (q.startsWith('INSERT INTO') && writes.length) writes.at(-1).push(q.match(/^INSERT INTO (\S+)/)[1]);
  }
  const withRows = writes.filter((w) => w.length > 0);
  assert.ok(withRows.length > 0, `writes seen: ${JSON.stringify(seen)}`);
  const tables = new Set(withRows.flat());
  for (const t of ['events', 'persons', 'person_distinct_ids', 'groups']) assert.ok(tables.has(t), `${t} written: ${JSON.stringify(withRows)}`);
  for (const w of withRows) {
    if (!w.includes('events')) continue;
    assert.equal(w.indexOf('events'), w.length - 1, `the events last: ${JSON.stringify(w)}`);
  }

  // and what a reader sees: the person of the merged ids, both ids on it
  const res = await s.get(`/api/projects/${s.boot.project_id}/persons/?distinct_id=anon-o`);
  assert.equal(res.status, 200);
  assert.equal(res.json.results.length, 1);
  assert.deepEqual([...res.json.results[0].distinct_ids].sort(), ['anon-o', 'user-o']);
});
