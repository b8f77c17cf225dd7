// endpoints_cityhash.test.mjs - cityHash64 on the SQLite store (libcommon's
// db/db_sqlite_cityhash.c) answers what ClickHouse 18.16 answers: a real
// ClickHouse server hashes the same bytes (the empty string, every length
// from 1 to 200 of pseudo-random bytes, which cross each of CityHash's
// length branches and the 64-byte block loop, binary bytes, UTF-8 text) and
// the several-argument combinations, and the HogQL endpoint on SQLite must
// give the same UInt64 digits. Bytes reach SQLite through base64Decode and
// ClickHouse through unhex; UInt64 answers are compared as their digits
// (read from the response text: a JSON number past 2^53 is not exact in JS).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { startClickHouse } from './lib/clickhouse.mjs';

const lite = PAIRS.find((p) => p.store === 'sqlite');

// Deterministic bytes: a linear congruential generator, seeded per input.
function bytes(len, seed) {
  const out = Buffer.alloc(len);
  let x = seed >>> 0;
  for (let i = 0; i < len; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

// The inputs, each one or more byte strings (one cityHash64 call each).
function inputs() {
  const out = [[Buffer.alloc(0)]];
  for (let len = 1; len <= 200; len++) out.push([bytes(len, len)]);
  for (const len of [255, 256, 257, 1000, 4096]) out.push([bytes(len, len)]);
  for (const t of ['a', 'ab', 'abc', 'caf\u00e9', '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8', '\u{1f600} emoji', 'user-42@example.com'])
    out.push([Buffer.from(t, 'utf8')]);
  out.push([Buffer.from([0, 0, 0]), Buffer.from([0xff, 0xfe])]);
  for (let k = 2; k <= 4; k++)
    for (const len of [0, 3, 9, 20, 40, 70]) out.push(Array.from({ length: k }, (_, i) => bytes(len + i, 1000 * k + len + i)));
  return out;
}

// The UInt64 digits of one answer row, in column order, from the raw body.
function rowDigits(text) {
  const m = text.match(/"results"\s*:\s*\[\s*\[([^\]]*)\]/);
  assert.ok(m, text.slice(0, 500));
  return m[1].split(',').map((d) => d.trim());
}

describe(`cityHash64 on SQLite equals ClickHouse 18.16's: ${pairName(lite)}`, () => {
  let s;
  let ch;
  let E;

  before(async () => {
    [s, ch] = await Promise.all([startPair(lite, {}), startClickHouse()]);
    E = `/api/projects/${s.boot.project_id}/endpoints/`;
  });

  after(async () => {
    await s?.stop();
    await ch?.stop();
  });

  async function sqliteHashes(name, calls) {
    const query = `SELECT ${calls.map((c, i) => `${c} AS h${i}`).join(', ')}`;
    const c = await s.call('POST', E, { name, query: { kind: 'HogQLQuery', query } });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    const r = await fetch(`${s.apiUrl}${E}${name}/run`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const text = await r.text();
    assert.equal(r.status, 200, text.slice(0, 500));
    return rowDigits(text);
  }

  test('every length 0..200 and past, binary and UTF-8, one to four arguments', async () => {
    const all = inputs();
    let compared = 0;
    for (let at = 0, part = 0; at < all.length; at += 60, part++) {
      const some = all.slice(at, at + 60);
      const liteCalls = some.map((args) => `cityHash64(${args.map((b) => `base64Decode('${b.toString('base64')}')`).join(', ')})`);
      const chCalls = some.map((args) => `cityHash64(${args.map((b) => `unhex('${b.toString('hex')}')`).join(', ')})`);
      const want = (await ch.query(`SELECT ${chCalls.join(', ')} FORMAT TabSeparated`)).trim().split('\t');
      const got = await sqliteHashes(`h${part}`, liteCalls);
      assert.equal(got.length, some.length);
      for (let i = 0; i < some.length; i++) {
        assert.equal(got[i], want[i], `cityHash64 of ${some[i].map((b) => b.toString('hex')).join(', ')}`);
        compared++;
      }
    }
    assert.equal(compared, all.length);
    assert.ok(compared > 220);
  });

  test('as a GROUP BY and ORDER BY key: ClickHouse\'s groups in its number order', async () => {
    const q = 'SELECT cityHash64(toString(number)) AS h, count() AS n FROM numbers(60) GROUP BY h ORDER BY h';
    const want = (await ch.query(`${q} FORMAT TabSeparated`)).trim().split('\n').map((l) => l.split('\t')[0]);
    const c = await s.call('POST', E, { name: 'ordered', query: { kind: 'HogQLQuery', query: q } });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    const r = await fetch(`${s.apiUrl}${E}ordered/run`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const text = await r.text();
    assert.equal(r.status, 200, text.slice(0, 500));
    const got = [...text.matchAll(/\[(\d+),1\]/g)].map((m) => m[1]);
    assert.equal(want.length, 60);
    assert.deepEqual(got, want);
  });

  test('of a column: the answer only; arithmetic and other types are refused with the reason', async () => {
    const ok = await s.call('POST', E, { name: 'col', query: { kind: 'HogQLQuery', query: "SELECT cityHash64('') AS h, cityHash64(event) AS e FROM events" } });
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
    const run = await s.call('POST', `${E}col/run`, {});
    assert.equal(run.status, 200, JSON.stringify(run.json));
    for (const [name, query, why] of [
      ['mod', 'SELECT cityHash64(event) % 10 AS b FROM events', /only as a column of the answer or a GROUP BY/],
      ['where', "SELECT count() FROM events WHERE cityHash64(event) > 5", /only as a column of the answer or a GROUP BY/],
      ['num', 'SELECT cityHash64(1) AS h', /takes strings/],
    ]) {
      const c = await s.call('POST', E, { name, query: { kind: 'HogQLQuery', query } });
      const r = c.status === 201 ? await s.call('POST', `${E}${name}/run`, {}) : c;
      assert.equal(r.status, 400, `${query}: ${JSON.stringify(r.json)}`);
      assert.match(r.json.detail, why);
    }
  });
});
