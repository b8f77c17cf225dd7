// persons_delete.test.mjs - DELETE /api/projects/{id}/persons/{uuid}/ (an
// erasure request, as PostHog offers it; docs/persons.md), on both pairs
// of backends (lib/suite.mjs): the person and its distinct ids leave the
// event store, with ?delete_events=true its events too (ClickHouse: a
// mutation, waited for), the flags' copies and the project's cached
// endpoint answers leave Redis, the writer forgets the person in its
// persons store (a new event of the same distinct id makes a new person
// without the old properties: listed on SQLite, behind the tombstones on
// ClickHouse, as PostHog); another person, another project's cache,
// and the person's events without delete_events stay; a materialized
// endpoint's table is not read after the erasure and is rebuilt without
// the events (on ClickHouse once the mutation is done). 404 for an unknown
// or malformed id and for another project's person; person:read is not
// enough.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { redisCommand } from './lib/redis.mjs';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { sleep, within } from './lib/rawhttp.mjs';

for (const pair of PAIRS) describe(`person deletion: ${pairName(pair)}`, () => {
  let s, A, B;
  const count = async (where) => {
    for (;;) {
      try { return Number(await s.store.count(where)); } catch (e) { if (!/locked/.test(e.message)) throw e; }
      await sleep(20);
    }
  };
  const capture = async (distinctId, event, properties = {}) => {
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: A.token, batch: [{ event, distinct_id: distinctId, uuid: crypto.randomUUID(), timestamp: new Date().toISOString(), properties }] }) });
    assert.equal(r.status, 200, await r.text());
  };
  const personOf = async (distinctId, project = A.id) => (await s.get(`/api/projects/${project}/persons/?distinct_id=${distinctId}`)).json.results ?? [];
  const did = (d) => `distinct_id = '${d}'`;

  before(async () => {
    s = await startPair(pair, { writer: { PERSON_ERASURE_POLL: '100ms' }, apiEnv: { MATERIALIZE_CHECK: '300ms' } });
    A = { id: s.boot.project_id, token: s.boot.project_api_token };
    const made = await s.call('POST', '/api/projects/', { name: 'B', organization: s.boot.organization_id });
    assert.equal(made.status, 201);
    B = { id: made.json.id };
    for (const [d, email] of [['erase-me', 'gone@example.com'], ['erase-me-too', null], ['keep-me', 'kept@example.com'], ['events-kept', 'x@example.com'], ['in-a-table', 't@example.com']]) {
      await capture(d, 'signed up', email ? { $set: { email } } : {});
      await capture(d, 'pageview', {});
    }
    await capture('erase-me-anon', 'anonymous visit', {}); // its own person, merged below
    await capture('erase-me', '$identify', { $anon_distinct_id: 'erase-me-anon' });
    await within(20000, 'every person written', async () => {
      for (const d of ['erase-me', 'erase-me-anon', 'keep-me', 'events-kept', 'erase-me-too', 'in-a-table']) if ((await personOf(d)).length !== 1) return false;
      return (await count(did('erase-me'))) === 3 && (await count(did('erase-me-anon'))) === 1;
    });
  });

  after(async () => { await s?.stop(); });

  test('unknown, malformed, another project\'s person: 404; a read-only key: 403', async () => {
    const id = (await personOf('keep-me'))[0].id;
    assert.equal((await s.call('DELETE', `/api/projects/${A.id}/persons/${crypto.randomUUID()}/`)).status, 404);
    assert.equal((await s.call('DELETE', `/api/projects/${A.id}/persons/not-a-uuid/`)).status, 404);
    assert.equal((await s.call('DELETE', `/api/projects/${A.id}/persons/42/`)).status, 404);
    assert.equal((await s.call('DELETE', `/api/projects/${B.id}/persons/${id}/`)).status, 404, 'project isolation');
    const key = (await s.call('POST', '/api/personal_api_keys/', { label: 'reader', scopes: ['person:read'] })).json.value;
    const r = await fetch(`${s.apiUrl}/api/projects/${A.id}/persons/${id}/`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } });
    assert.equal(r.status, 403, await r.text());
    assert.equal((await personOf('keep-me')).length, 1, 'still there');
  });

  test('delete_events=true: person, distinct ids, events, copies and caches go; others stay', async () => {
    const person = (await personOf('erase-me'))[0];
    assert.deepEqual([...person.distinct_ids].sort(), ['erase-me', 'erase-me-anon']);
    assert.equal(person.properties.email, 'gone@example.com');
    const keptEvents = await count(did('keep-me'));
    assert.ok(keptEvents >= 2);
    // a cached endpoint answer of each project (what a run would have left)
    await redisCommand(s.redis.port, 'SET', `endpoint_cache:${A.id}:aaaa`, 'x');
    await redisCommand(s.redis.port, 'SET', `endpoint_cache:${A.id}:bbbb`, 'x');
    await redisCommand(s.redis.port, 'SET', `endpoint_cache:${B.id}:aaaa`, 'x');
    await within(10000, 'the flags copy written', async () => (await redisCommand(s.redis.port, 'EXISTS', `persons:${A.id}:erase-me`)) === 1);

    const r = await s.call('DELETE', `/api/projects/${A.id}/persons/${person.id.toUpperCase()}/?delete_events=true`);
    assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(r.json.id, person.id);
    assert.deepEqual([...r.json.distinct_ids].sort(), ['erase-me', 'erase-me-anon']);
    assert.equal(r.json.delete_events, true);
    assert.equal(r.json.status, pair.store === 'clickhouse' ? 'pending' : 'done');
    assert.equal(r.json.events_deleted, 4, 'the anonymous id\'s event too');

    // at once, on both stores: the person is not listed (SQLite: deleted;
    // ClickHouse: hidden by its tombstone while the mutations run)
    assert.equal((await personOf('erase-me')).length, 0);
    assert.equal((await personOf('erase-me-anon')).length, 0);
    assert.equal((await s.get(`/api/projects/${A.id}/persons/?limit=100`)).json.results.filter((p) => p.id === person.id).length, 0);
    if (pair.store === 'sqlite') assert.equal(await count(did('erase-me')), 0);
    if (pair.store === 'sqlite') assert.equal(await count(did('erase-me-anon')), 0);
    await within(60000, 'the events deleted', async () => (await count(did('erase-me'))) === 0 && (await count(did('erase-me-anon'))) === 0);
    if (pair.store === 'clickhouse') {
      // the mutations leave only the tombstones: no properties, marked deleted
      const rowsOf = async (table, col) => (await s.store.ch.rows(`SELECT is_deleted AS d${table === 'persons' ? ', properties AS p' : ''} FROM ${table} WHERE toString(${col}) = '${person.id}'`));
      await within(60000, 'the live rows of the person deleted', async () => {
        const p = await rowsOf('persons', 'id');
        const d = await rowsOf('person_distinct_ids', 'person_id');
        return p.length === 1 && Number(p[0].d) === 1 && p[0].p === '{}' && d.length === 2 && d.every((r) => Number(r.d) === 1);
      });
    }
    assert.equal(await count(did('keep-me')), keptEvents, 'another person\'s events stay');
    assert.equal((await personOf('keep-me')).length, 1);
    assert.equal(await redisCommand(s.redis.port, 'EXISTS', `persons:${A.id}:erase-me`), 0, 'the flags copy');
    assert.equal(await redisCommand(s.redis.port, 'EXISTS', `endpoint_cache:${A.id}:aaaa`), 0, 'the cache');
    assert.equal(await redisCommand(s.redis.port, 'EXISTS', `endpoint_cache:${A.id}:bbbb`), 0, 'the cache');
    assert.equal(await redisCommand(s.redis.port, 'EXISTS', `endpoint_cache:${B.id}:aaaa`), 1, 'another project\'s cache');

    // the writer took the request and forgot the person in its store
    await within(15000, 'the writer erased the person', async () => (await s.metric('writer_person_erasures_total')) === 1);
    assert.equal(await redisCommand(s.redis.port, 'LLEN', 'person_erasures'), 0);
    await capture('erase-me', 'came back', { $set: { plan: 'new' } });
    await within(20000, 'the new event stored', async () => (await count("event = 'came back'")) === 1);
    if (pair.store === 'sqlite') {
      // a new person for the id, from scratch
      await within(20000, 'a new person for the id', async () => (await personOf('erase-me')).length === 1);
      const again = (await personOf('erase-me'))[0];
      assert.equal(again.properties.email, undefined, 'the old properties are gone');
      assert.equal(again.properties.plan, 'new');
      assert.deepEqual(again.distinct_ids, ['erase-me'], 'the merged id is not joined again');
    } else {
      // the tombstones' versions stay above the new person's (docs/persons.md)
      assert.equal((await personOf('erase-me')).length, 0);
    }
    // the writer's copy for flags is the new person's, without the old properties
    await within(20000, 'the new flags copy', async () => {
      const v = await redisCommand(s.redis.port, 'GET', `persons:${A.id}:erase-me`);
      return v !== null && JSON.parse(v).properties.plan === 'new';
    });
    assert.equal(JSON.parse(await redisCommand(s.redis.port, 'GET', `persons:${A.id}:erase-me`)).properties.email, undefined);
    assert.equal((await s.call('DELETE', `/api/projects/${A.id}/persons/${crypto.randomUUID()}/`)).status, 404);
  });

  test('without delete_events the events stay', async () => {
    const person = (await personOf('events-kept'))[0];
    const before = await count(did('events-kept'));
    assert.ok(before >= 2);
    const r = await s.call('DELETE', `/api/projects/${A.id}/persons/${person.id}/`);
    assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(r.json.delete_events, false);
    assert.equal(r.json.events_deleted, 0);
    assert.equal((await personOf('events-kept')).length, 0);
    assert.equal(await count(did('events-kept')), before);
    assert.equal((await s.call('DELETE', `/api/projects/${A.id}/persons/${person.id}/`)).status, 404, 'a second time: gone');
    await within(15000, 'the writer applied the second request too', async () => (await s.metric('writer_person_erasures_total')) === 2);
  });
  test('a materialized endpoint stops answering from its table, which is rebuilt without the events', async () => {
    const E = `/api/projects/${A.id}/endpoints/`;
    let r = await s.call('POST', `/api/projects/${A.id}/insight_variables/`, { name: 'who', type: 'String', default_value: null });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await s.call('POST', E, { name: 'per-user', is_materialized: true, sync_frequency: '1hour', query: { kind: 'HogQLQuery', query: 'SELECT count() AS c FROM events WHERE distinct_id = {variables.who}' } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const status = async () => (await s.call('GET', `${E}per-user/materialization_status`)).json;
    await within(30000, 'the table built', async () => (await status()).status === 'Completed');
    const run = async () => (await s.call('POST', `${E}per-user/run`, { variables: { who: 'in-a-table' } })).json;
    const before = await run();
    assert.equal(before.endpoint_materialized, true, JSON.stringify(before));
    assert.deepEqual(before.results, [[2]]);
    const builtAt = (await status()).last_materialized_at;

    const person = (await personOf('in-a-table'))[0];
    r = await s.call('DELETE', `/api/projects/${A.id}/persons/${person.id}/?delete_events=true`);
    assert.equal(r.status, 202, JSON.stringify(r.json));
    if (pair.store === 'sqlite') {
      // at once: the table (built an hour's period ago at most) is not read
      const after = await run();
      assert.deepEqual(after.results, [[0]], JSON.stringify(after));
    }
    await within(60000, 'rebuilt, and answering without the events', async () => {
      const st = await status();
      const a = await run();
      return st.status === 'Completed' && st.last_materialized_at !== builtAt && a.endpoint_materialized === true && a.results?.[0]?.[0] === 0;
    });
  });
});
