// endpoints_store_errors.test.mjs - how an endpoint run answers the event
// store's failures (docs/endpoints.md, "Run"), against a stand-in for
// ClickHouse's HTTP interface that answers what a real server never does
// on demand: errors that do not begin with "Code:" (a gateway's 400, an
// exception printed differently, a proxy's 502). A refused query is 400,
// a store away is 503, and no answer carries the store's own text (it is
// logged with the request id, which the answer names).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);

// What the stand-in answers a query holding one of these words.
const FAULTS = {
  gateway_refused: [400, 'Bad request: the gateway refused the statement SELECT secret_column'],
  odd_exception: [500, 'Received exception from server: DB::Exception: Missing columns: c1_0 while processing SELECT'],
  code_exception: [500, 'Code: 47, e.displayText() = DB::Exception: Unknown identifier: c1_0, e.what() = DB::Exception'],
  proxy_down: [502, '<html>502 Bad Gateway: upstream 10.0.0.7:8123 unreachable</html>'],
  no_credentials: [401, 'Code: 192. DB::Exception: Unknown user default'],
  wrong_password: [500, 'Code: 193, e.displayText() = DB::Exception: Wrong password for user default'],
};

// Reads that never answer (their query_id) and the KILL QUERY statements seen.
const held = { ids: [], kills: [], responses: [] };

function standIn() {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const sql = `${decodeURIComponent(new URL(req.url, 'http://x').searchParams.get('query') || '')} ${body}`;
      if (/SELECT version\(\)/.test(sql)) return res.end('18.16.1\n');
      if (/^\s*KILL QUERY/.test(body)) {
        held.kills.push(body);
        held.responses.splice(0).forEach((r) => r.destroy()); // as the server would
        return res.end('');
      }
      if (sql.includes('hangs_forever')) { // a read ClickHouse keeps running
        held.ids.push(new URL(req.url, 'http://x').searchParams.get('query_id'));
        held.responses.push(res);
        return;
      }
      for (const [word, [status, text]] of Object.entries(FAULTS)) {
        if (sql.includes(word)) {
          res.writeHead(status, { 'Content-Type': 'text/plain' });
          return res.end(text);
        }
      }
      if (/FORMAT TabSeparatedWithNames/.test(sql)) return res.end('m\n1\n');
      res.end(''); // the DDL, anything else
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('endpoint runs: the event store\'s failures, answered without its text', () => {
  let redis, ch, api, tmp, boot, E;
  const call = async (method, p, body) => {
    const r = await fetch(`http://127.0.0.1:${api.port}${p}`, {
      method,
      headers: { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json', 'X-Request-Id': 'req-store-errors-1' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, json: await r.json() };
  };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-store-errors-'));
    redis = await startRedis();
    ch = await standIn();
    const env = {
      API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, LOG_LEVEL: 'warn',
      CLICKHOUSE_URL: `http://127.0.0.1:${ch.address().port}/`, MATERIALIZE_CHECK: '1h', QUERY_TIMEOUT: '2s',
    };
    boot = JSON.parse((await run(path.join(BUILD, 'bin', 'api'), ['bootstrap'], { env: { ...process.env, ...env } })).stdout);
    api = await startServer(path.join(BUILD, 'bin', 'api'), env, { ready: true });
    E = `/api/projects/${boot.project_id}/endpoints/`;
  });

  after(async () => {
    await api?.stop();
    await redis?.stop();
    held.responses.forEach((r) => r.destroy());
    ch?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const runWith = async (word) => {
    const name = word.replace(/_/g, '-');
    let r = await call('POST', E, { name, query: { kind: 'HogQLQuery', query: `SELECT '${word}' AS m` } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await call('POST', `${E}${name}/run`, { refresh: 'force' });
    // nothing of the store's text: not its words, not the SQL's columns
    assert.doesNotMatch(JSON.stringify(r.json), /Code:|DB::|Exception|gateway|secret_column|c1_0|10\.0\.0\.7|Unknown user|password|SELECT/);
    return r;
  };

  test('the stand-in answers an ordinary run', async () => {
    const r = await call('POST', E, { name: 'fine', query: { kind: 'HogQLQuery', query: "SELECT 'ok' AS m" } });
    assert.equal(r.status, 201);
    const a = await call('POST', `${E}fine/run`, {});
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.deepEqual(a.json.results, [['1']]);
  });

  for (const word of ['gateway_refused', 'odd_exception', 'code_exception']) {
    test(`a refusal (${FAULTS[word][0]} "${FAULTS[word][1].slice(0, 24)}..."): 400 naming the request`, async () => {
      const r = await runWith(word);
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.equal(r.json.detail, 'Query execution failed: the event store refused the query (request req-store-errors-1).');
    });
  }

  for (const word of ['proxy_down', 'no_credentials', 'wrong_password']) {
    test(`the store away (${FAULTS[word][0]}): 503 naming the request`, async () => {
      const r = await runWith(word);
      assert.equal(r.status, 503, JSON.stringify(r.json));
      assert.equal(r.json.detail, 'The event store cannot be reached (request req-store-errors-1).');
    });
  }

  test('a read given up on its time limit is stopped in the store by its query_id', async () => {
    // ClickHouse does not stop an HTTP query whose client went away, and
    // checks its own limit between blocks only: without the KILL, a tenant
    // retrying a heavy query would stack copies of it there.
    let r = await call('POST', E, { name: 'hangs', query: { kind: 'HogQLQuery', query: "SELECT 'hangs_forever' AS m" } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    r = await call('POST', `${E}hangs/run`, { refresh: 'force' });
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.detail, 'Query execution failed: the query took longer than 2 s.');
    assert.equal(held.ids.length, 1);
    assert.match(held.ids[0] ?? '', /^[0-9a-f-]{36}$/, 'the read carries a query_id');
    await within(3000, 'a KILL QUERY for it', async () => held.kills.length > 0);
    assert.equal(held.kills[0].trim(), `KILL QUERY WHERE query_id = '${held.ids[0]}' ASYNC FORMAT TabSeparated`);
  });

  test('the store\'s text is in the api\'s log, with the request id', async () => {
    const log = api.stderr();
    assert.match(log, /req-store-errors-1/);
    assert.match(log, /secret_column/);
    assert.match(log, /502 Bad Gateway/);
  });
});
