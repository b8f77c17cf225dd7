// query_admission.test.mjs - one tenant cannot hold the event store for the
// others (docs/endpoints.md "Sharing the event store"), on both pairs of
// backends (lib/suite.mjs). Project B has 3,000 events and an endpoint
// whose triple CROSS JOIN runs until the query time limit (QUERY_TIMEOUT,
// set short here); project A has a trivial count. While three B runs are
// in flight (two running, the third waiting its turn), A's runs answer
// fast, a B run past B's queue is refused with 429 and Retry-After, and
// the waiting B run times out on its request's clock, not on one started
// when it got its turn.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const TIMEOUT_S = 6; // QUERY_TIMEOUT: the heavy runs end there
const B_EVENTS = 3000;
const RUNS = 100; // A's runs measured: p99 is the 99th of them
const T0 = 1709294400000; // 2024-03-01T12:00:00Z

// B's events straight into the store: the writer's path is not what this is about.
async function seed(s, project, n) {
  if (s.pair.store === 'sqlite') {
    const sql = `INSERT INTO events SELECT printf('00000000-0000-4000-8000-%012d', ${project} * 100000 + x), ${project}, 'e', 'd' || (x % 10),
      '00000000-0000-4000-8000-000000000000', '{}', '{}', '2024-03-01 12:00:00', ${T0}, '2024-03-01 12:00:00', ''
      FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT x FROM c)`;
    const { execFile } = await import('node:child_process');
    await new Promise((resolve, reject) => execFile('sqlite3', [s.store.env.EVENTS_DB, sql], (e) => (e ? reject(e) : resolve())));
  } else {
    await s.store.ch.query(`INSERT INTO events (uuid, project_id, event, distinct_id, person_id, properties, person_properties, timestamp, timestamp_ms, created_at, session_id)
      SELECT toUUID(concat('00000000-0000-4000-8000-', toString(100000000000 + ${project} * 100000 + number))), ${project}, 'e', concat('d', toString(number % 10)),
        toUUID('00000000-0000-4000-8000-000000000000'), '{}', '{}', toDateTime('2024-03-01 12:00:00'), ${T0}, toDateTime('2024-03-01 12:00:00'), ''
      FROM numbers(${n})`);
  }
}

// B's heavy query: twelve times the 9,000,000 pairs of B's events, each
// pair's text hashed, well past the time limit on either store, bounded
// in memory (ClickHouse 18.16 makes a cross join's rows in one block, so
// a triple cross join of 3,000 rows would not fit; one JOIN per SELECT).
const PAIRS_OF_B = 'SELECT uniqExact(concat(a.distinct_id, b.d)) AS c FROM (SELECT distinct_id FROM events) AS a'
  + ' CROSS JOIN (SELECT distinct_id AS d FROM events) AS b';
const HEAVY = Array(12).fill(PAIRS_OF_B).join(' UNION ALL ');

const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1];

for (const pair of PAIRS) describe(`query admission: ${pairName(pair)}`, () => {
  let s, A, B;
  const run = async (project, name) => {
    const t = performance.now();
    const r = await s.call('POST', `/api/projects/${project}/endpoints/${name}/run`, { refresh: 'force' });
    return { ...r, ms: performance.now() - t };
  };

  before(async () => {
    s = await startPair(pair, {
      apiEnv: { QUERY_TIMEOUT: `${TIMEOUT_S}s`, QUERY_CONCURRENCY_PER_PROJECT: '2', QUERY_QUEUE_PER_PROJECT: '1' },
    });
    B = s.boot.project_id;
    const made = await s.call('POST', '/api/projects/', { name: 'tenant A' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    A = made.json.id;
    await seed(s, B, B_EVENTS);
    await seed(s, A, 20);
    await within(20000, 'the events stored', async () => (await s.store.count(`project_id = ${B}`)) === B_EVENTS);
    let r = await s.call('POST', `/api/projects/${B}/endpoints/`, {
      name: 'heavy', query: { kind: 'HogQLQuery', query: HEAVY },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await s.call('POST', `/api/projects/${A}/endpoints/`, {
      name: 'trivial', query: { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await run(A, 'trivial');
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.results, [[20]]);
  });

  after(async () => {
    await s?.stop();
  });

  test('while B runs three heavy queries, A answers fast; past B\'s queue 429; B\'s queued run times out on its own clock', async () => {
    // Four at once: two take B's slots, one its queue place, and one (whichever
    // reaches the admission last: each is authenticated first) is refused.
    const four = [0, 1, 2, 3].map(() => run(B, 'heavy'));
    const first = await Promise.race(four.map((p, i) => p.then((r) => ({ r, i }))));
    assert.equal(first.r.status, 429, JSON.stringify(first.r.json));
    assert.match(first.r.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(first.r.json.type, 'throttled_error');
    assert.match(first.r.json.detail, /Too many queries of this project/);
    let settled = 0;
    const heavy = four.filter((_, i) => i !== first.i).map((p) => p.finally(() => settled++));

    const a = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await run(A, 'trivial');
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.is_cached, false);
      assert.deepEqual(r.json.results, [[20]]);
      a.push(r.ms);
    }
    const t = performance.now();
    const list = await s.call('GET', `/api/projects/${A}/events/?limit=1`);
    const listMs = performance.now() - t;
    assert.equal(list.status, 200, JSON.stringify(list.json));
    assert.equal(list.json.results.length, 1);
    // the measure means something only if B's queries were running throughout
    assert.equal(settled, 0, 'B\'s heavy runs ended before A was measured: make them heavier');
    assert.ok(p99(a) < 100, `A's p99 ${p99(a).toFixed(1)} ms (all: ${a.map((x) => x.toFixed(0)).join(' ')})`);
    assert.ok(listMs < 100, `A's events list took ${listMs.toFixed(1)} ms`);

    const done = await Promise.all(heavy);
    for (const r of done) {
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(r.json.detail, `Query execution failed: the query took longer than ${TIMEOUT_S} s.`);
    }
    // The third waited for a slot, which came free only when the first two
    // ran out of time: its own limit counted from its request, so it ends
    // about then too, not a whole limit later.
    const last = Math.max(...done.map((r) => r.ms));
    assert.ok(last < (TIMEOUT_S * 2 - 1) * 1000, `the queued run answered after ${last.toFixed(0)} ms`);
  });
});
