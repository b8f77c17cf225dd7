// endpoints_hostile.test.mjs - queries that try to read another project's
// rows, the stores' own tables or files, or to write, and variable values
// that try to get out of their literal: each is refused with 400 or
// answers with the caller's rows only; none answers 500, none shows a
// row of the other project (whose events all carry "victim").
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';
import { redisCommand } from './lib/redis.mjs';

const HOSTILE = [
  'SELECT * FROM events',
  'SELECT distinct_id FROM events WHERE 1 = 1 OR 1 = 1',
  "SELECT distinct_id FROM events WHERE project_id != 0",
  "SELECT distinct_id FROM events WHERE team_id = 2",
  'SELECT distinct_id FROM (SELECT * FROM events) AS e',
  'SELECT e.distinct_id FROM events e JOIN events f ON e.uuid = f.uuid',
  'SELECT e.distinct_id FROM events e LEFT JOIN persons p ON 1 = 1',
  'SELECT a.distinct_id FROM events a FULL JOIN events b ON a.uuid = b.uuid',
  'WITH x AS (SELECT * FROM events) SELECT distinct_id FROM x',
  'SELECT distinct_id FROM events UNION ALL SELECT distinct_id FROM events',
  'SELECT distinct_id FROM events AS persons',
  'SELECT distinct_id FROM `events`',
  'SELECT distinct_id FROM "events" /* comment */ -- more',
  'SELECT distinct_id FROM events WHERE uuid IN (SELECT uuid FROM events)',
  'SELECT (SELECT max(distinct_id) FROM events)',
  'SELECT distinct_id FROM events LIMIT 1000000',
  'SELECT * FROM system.tables',
  'SELECT * FROM system.one',
  'SELECT * FROM sqlite_master',
  'SELECT name FROM sqlite_schema',
  'SELECT * FROM pragma_table_info(\'events\')',
  "SELECT load_extension('x')",
  "SELECT * FROM file('/etc/passwd')",
  "SELECT * FROM url('http://127.0.0.1/')",
  'SELECT * FROM events; DROP TABLE events',
  'DROP TABLE events',
  "INSERT INTO events VALUES (1)",
  'DELETE FROM events',
  'ATTACH DATABASE \'x\' AS y',
  'PRAGMA table_info(events)',
  'SELECT * FROM events SETTINGS readonly = 0',
  'SELECT * FROM events FINAL',
  "SELECT readFile('/etc/passwd')",
  "SELECT currentDatabase()",
  'SELECT distinct_id FROM events ARRAY JOIN [1, 2] AS x',
  "SELECT {variables.v} FROM events",
  'SELECT properties.secret FROM events',
  'SELECT person.properties.secret FROM events',
  'SELECT properties FROM persons',
  'SELECT * FROM groups',
];

const VALUES = [
  "' OR '1'='1",
  "x' UNION ALL SELECT distinct_id FROM events --",
  "\\' OR 1=1 --",
  'x\\',
  "'; DROP TABLE events; --",
  "victim-0') OR ('a' = 'a",
  "\u0000",
  ["' OR 1=1 --", "victim-1"],
  42,
  true,
];

for (const pair of PAIRS) describe(`hostile queries: ${pairName(pair)}`, () => {
  let s, P, E;

  before(async () => {
    s = await startPair(pair, { ingestEnv: { REGISTRY_REFRESH: '100ms' } });
    P = s.boot.project_id;
    E = `/api/projects/${P}/endpoints/`;
    // the other project, with its own token and events
    const other = await s.call('POST', '/api/projects/', { name: 'victim' });
    assert.equal(other.status, 201, JSON.stringify(other.json));
    await within(15000, 'the new token published', async () => (await redisCommand(s.redis.port, 'HGET', 'projects:tokens', other.json.api_token)) === String(other.json.id));
    await new Promise((r) => setTimeout(r, 500)); // ingest re-reads the registry
    const mine = new PostHog(s.boot.project_api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    const theirs = new PostHog(other.json.api_token, { host: s.ingestUrl, flushAt: 100, flushInterval: 0 });
    for (let i = 0; i < 10; i++) {
      mine.capture({ distinctId: `mine-${i}`, event: 'e', properties: { n: i } });
      theirs.capture({ distinctId: `victim-${i}`, event: 'victim', properties: { secret: 'victim-secret' } });
    }
    theirs.identify({ distinctId: 'victim-0', properties: { secret: 'victim-person' } });
    await mine.shutdown();
    await theirs.shutdown();
    await within(30000, 'both projects stored', async () => (await s.store.distinct()) >= 21);
    const v = await s.call('POST', `/api/projects/${P}/insight_variables/`, { name: 'v', type: 'String' });
    assert.equal(v.status, 201);
    const l = await s.call('POST', `/api/projects/${P}/insight_variables/`, { name: 'l', type: 'List' });
    assert.equal(l.status, 201);
  });

  after(async () => {
    await s?.stop();
  });

  test(`${HOSTILE.length} hostile queries: 400 or only the caller's rows`, async () => {
    let answered = 0;
    for (let i = 0; i < HOSTILE.length; i++) {
      const q = HOSTILE[i];
      const c = await s.call('POST', E, { name: `h${i}`, query: { kind: 'HogQLQuery', query: q } });
      assert.ok(c.status === 201 || c.status === 400, `${q}: create ${c.status} ${JSON.stringify(c.json)}`);
      if (c.status === 400) {
        assert.equal(c.json.type, 'validation_error');
        continue;
      }
      const r = await s.call('POST', `${E}h${i}/run`, { variables: q.includes('{variables.v}') ? { v: 'x' } : undefined, limit: 50000 });
      assert.ok(r.status === 200 || r.status === 400, `${q}: run ${r.status} ${JSON.stringify(r.json)}`);
      if (r.status === 200) {
        answered++;
        assert.ok(!JSON.stringify(r.json.results).includes('victim'), `${q} showed another project's rows`);
      }
    }
    assert.ok(answered >= 10, 'the plain reads ran');
  });

  test('variable values never leave their literal', async () => {
    let r = await s.call('POST', E, {
      name: 'by-id',
      query: { kind: 'HogQLQuery', query: 'SELECT distinct_id, count() FROM events WHERE distinct_id = {variables.v} OR event IN {variables.l} GROUP BY distinct_id ORDER BY distinct_id' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    for (const value of VALUES) {
      r = await s.call('POST', `${E}by-id/run`, { variables: { v: Array.isArray(value) ? 'mine-1' : value, l: Array.isArray(value) ? value : [String(value)] }, refresh: 'force' });
      assert.ok(r.status === 200 || r.status === 400, `${JSON.stringify(value)}: ${r.status} ${JSON.stringify(r.json)}`);
      if (r.status === 200) {
        assert.ok(!JSON.stringify(r.json.results).includes('victim'), `${JSON.stringify(value)} showed another project's rows`);
        assert.ok(r.json.results.length <= 1, `${JSON.stringify(value)} matched more than a literal could: ${JSON.stringify(r.json.results)}`);
      }
    }
    r = await s.call('POST', `${E}by-id/run`, { variables: { v: 'mine-3', l: [] } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.results, [['mine-3', 1]]);
  });

  test('100 KB and 10,000-deep queries: 400, never a crash', async () => {
    const deep = `SELECT ${'('.repeat(10000)}1${')'.repeat(10000)}`;
    let r = await s.call('POST', E, { name: 'deep', query: { kind: 'HogQLQuery', query: deep } });
    assert.equal(r.status, 400);
    assert.match(r.json.detail, /nested too deeply/);
    const long = `SELECT count() FROM events WHERE distinct_id IN ('x'${", 'padding-padding'".repeat(6000)})`;
    assert.ok(long.length > 100000);
    r = await s.call('POST', E, { name: 'long', query: { kind: 'HogQLQuery', query: long } });
    assert.equal(r.status, 201, JSON.stringify(r.json).slice(0, 300));
    r = await s.call('POST', `${E}long/run`, {});
    assert.equal(r.status, 200, JSON.stringify(r.json).slice(0, 300));
    assert.deepEqual(r.json.results, [[0]]);
    const ands = `SELECT count() FROM events WHERE ${Array(20000).fill('1 = 1').join(' AND ')}`;
    r = await s.call('POST', E, { name: 'ands', query: { kind: 'HogQLQuery', query: ands } });
    assert.equal(r.status, 400);
    assert.equal((await fetch(`${s.apiUrl}/_health`)).status, 200, 'the api still answers');
  });
});
