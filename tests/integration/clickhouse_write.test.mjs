// clickhouse_write.test.mjs - what a write sends to ClickHouse, seen from
// a recording HTTP proxy between the services and a real ClickHouse;
// events come from posthog-node through ingest and the writer.
//
// The order of a write's statements: a write is not atomic across tables,
// so its order is what a reader can see half-way. The person, distinct-id
// and group rows go in before the events, so an event that can be read has
// its person rows there too (a person looked up by the distinct id of an
// event just read is found, with every id merged into it by that event).
//
// The events go as RowBinary (evstore_ch_rowbinary.c): every column read
// back is what the event said, byte for byte (NUL, quotes, backslashes,
// control characters, characters outside the BMP), the key and value
// arrays as the JSON path writes them, both uuids, the times.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PostHog } from 'posthog-node';
import { randomUUID } from 'node:crypto';
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
      seen.push((q ?? body.toString('utf8')).slice(0, 400));
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

test('an event goes as RowBinary and reads back byte for byte', async () => {
  const odd = 'a\u0000b "q" \\ \t\n\u0001 héllo ☃ 😀 日本';
  const props = { s: odd, n: 1.5, big: 12345678901234, b: true, f: false, z: null, o: { x: [1, 'y'], 'k"': odd }, a: [], e: '', [odd]: 'key' };
  const uuid = randomUUID();
  const at = new Date('2026-03-04T05:06:07.891Z');
  const name = `odd ${odd.replace('\u0000', '')}`; // the writer reads the event's name as text up to a NUL
  const client = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 1, flushInterval: 0 });
  client.capture({ distinctId: 'bytes-o', event: name, uuid, timestamp: at, properties: { ...props, $set: { p: odd, q: 2 } } });
  await client.shutdown();
  const q = `uuid = toUUID('${uuid}')`;
  await within(30000, 'the event stored', async () => (await store.count(q)) === 1);
  assert.ok(seen.some((x) => x.startsWith('INSERT INTO events (') && x.includes('FORMAT RowBinary')), 'the events went as RowBinary');

  const [row] = await store.ch.rows(`SELECT toString(uuid) AS u, event, distinct_id AS d, toString(person_id) AS pid, properties AS p, person_properties AS pp,
    properties_keys AS pk, properties_values AS pv, person_properties_keys AS ppk, person_properties_values AS ppv,
    toString(timestamp) AS t, timestamp_ms AS tms, toUnixTimestamp(created_at) AS c FROM events WHERE ${q}`);
  assert.equal(row.u, uuid);
  assert.equal(row.event, name);
  assert.equal(row.d, 'bytes-o');
  const stored = JSON.parse(row.p);
  for (const [k, v] of Object.entries(props)) assert.deepEqual(stored[k], v, k);
  assert.equal(JSON.parse(row.pp).p, odd);
  // the arrays: the keys of the members that are not null, each value a
  // string's text or the member's JSON as the properties text has it
  const expect = (text) => {
    const o = JSON.parse(text);
    const keys = Object.keys(o).filter((k) => o[k] !== null);
    return [keys, keys.map((k) => (typeof o[k] === 'string' ? o[k] : JSON.stringify(o[k])))];
  };
  assert.deepEqual([row.pk, row.pv], expect(row.p));
  assert.deepEqual([row.ppk, row.ppv], expect(row.pp));
  assert.ok(row.pk.includes(odd) && row.pv.includes(odd) && !row.pk.includes('z'));
  // the time as sent, less the client's clock skew (sent_at against now)
  const tms = Number(row.tms);
  assert.ok(Math.abs(tms - at.getTime()) < 1000, `timestamp_ms ${tms}`);
  assert.equal(row.t, new Date(tms - (tms % 1000)).toISOString().slice(0, 19).replace('T', ' '));
  assert.ok(Math.abs(Number(row.c) * 1000 - Date.now()) < 120000, `created_at ${row.c}`);
  const person = (await s.get(`/api/projects/${s.boot.project_id}/persons/?distinct_id=bytes-o`)).json.results[0];
  assert.equal(row.pid, person.id);
});
