// api_inputs.test.mjs - the api's small input defects of issue 26, each as
// it was reported: an empty query value (?is_active=, ?event=, ...) passed
// NULL to memchr (the sanitizer api died); ?version=%ff echoed the raw
// byte (a body that is not UTF-8); two Authorization headers were taken
// (the first won); another organization's CIMD verification tokens listed
// as an empty 200. The api must still be alive and exit cleanly at the end.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TextDecoder } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { connect } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');
const utf8 = new TextDecoder('utf-8', { fatal: true });

describe('api input defects', () => {
  let redis, api, tmp, a, b, base;
  const P = () => `/api/projects/${a.project_id}`;
  const call = async (method, p, { key = a.personal_api_key, body } = {}) => {
    const r = await fetch(`${base}${p}`, {
      method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const bytes = Buffer.from(await r.arrayBuffer());
    const text = utf8.decode(bytes); // throws on a body that is not UTF-8
    return { status: r.status, text, json: text ? JSON.parse(text) : null };
  };

  before(async () => {
    redis = await startRedis();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-apiinputs-'));
    const env = { API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tmp}/meta.db`, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'warn' };
    const runEnv = { env: { ...process.env, ...env } };
    a = JSON.parse((await run(API, ['bootstrap'], runEnv)).stdout);
    b = JSON.parse((await run(API, ['adduser', 'other@example.com'], runEnv)).stdout);
    api = await startServer(API, env, { ready: true });
    base = `http://127.0.0.1:${api.port}`;
    const made = await call('POST', `${P()}/endpoints/`, { body: { name: 'q', query: { kind: 'HogQLQuery', query: 'SELECT 1 AS one' } } });
    assert.equal(made.status, 201, made.text);
  });
  after(async () => {
    const exit = await api?.stop();
    await redis?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    assert.equal(exit?.code, 0, api?.stderr());
  });

  test('empty query values are values, not a crash', async () => {
    for (const p of [
      `${P()}/endpoints/?is_active=`, `${P()}/endpoints/?is_active`,
      `${P()}/events/?event=`, `${P()}/events/?distinct_id=`, `${P()}/events/?before_id=`,
      `${P()}/events/?before=`, `${P()}/persons/?distinct_id=`,
      `${P()}/endpoints/q/openapi.json?version=`, `${P()}/endpoints/q/run?version=`,
      `${P()}/endpoints/q/versions/?limit=`, `/api/projects/?limit=&offset=`,
    ]) {
      const r = await call('GET', p);
      assert.ok(r.status < 500, `${p}: ${r.status} ${r.text}`);
      assert.ok(r.json && typeof r.json === 'object', p);
    }
    // the api is still there
    assert.equal((await call('GET', '/api/users/@me/')).status, 200);
  });

  test('?is_active= (empty) is no filter, as django-filter reads it; true and false filter', async () => {
    const off = await call('POST', `${P()}/endpoints/`, { body: { name: 'off', is_active: false, query: { kind: 'HogQLQuery', query: 'SELECT 2 AS two' } } });
    assert.equal(off.status, 201, off.text);
    const names = async (q) => (await call('GET', `${P()}/endpoints/${q}`)).json.results.map((e) => e.name).sort();
    assert.deepEqual(await names('?is_active='), ['off', 'q']);
    assert.deepEqual(await names('?is_active=true'), ['q']);
    assert.deepEqual(await names('?is_active=false'), ['off']);
  });

  test('?version=%ff: a 400 whose body is UTF-8 (the byte replaced, not echoed)', async () => {
    for (const p of [`${P()}/endpoints/q/openapi.json?version=%ff`, `${P()}/endpoints/q/run?version=%ff%fe`]) {
      const r = await call('GET', p);
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, /\ufffd/, p);
    }
  });

  test('two Authorization headers: 400, whichever comes first', async () => {
    for (const [first, second] of [['nope', a.personal_api_key], [a.personal_api_key, 'nope'], [a.personal_api_key, a.personal_api_key]]) {
      const c = await connect(api.port);
      c.write(`GET /api/users/@me/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\nauthorization: Bearer ${second}\r\n\r\n`);
      const r = await c.response();
      c.destroy();
      assert.equal(r.status, 400);
      assert.match(r.body.toString(), /More than one Authorization header/);
    }
  });

  test("another organization's verification tokens: 404 for every method", async () => {
    const V = `/api/organizations/${b.organization_id}/cimd_verification_tokens/`;
    assert.equal((await call('GET', V)).status, 404);
    assert.equal((await call('POST', V, { body: { cimd_url: 'https://example.com/c.json' } })).status, 404);
    assert.equal((await call('DELETE', `${V}01a22037-a9c5-75bf-8091-66b55cacf07b/`)).status, 404);
    // its own still lists; a key scoped to another organization does not reach it
    const mine = `/api/organizations/${a.organization_id}/cimd_verification_tokens/`;
    assert.equal((await call('GET', mine)).status, 200);
    const elsewhere = await call('POST', '/api/personal_api_keys/', { body: { label: 'o', scopes: ['*'], scoped_organizations: [b.organization_id] } });
    assert.equal(elsewhere.status, 201, elsewhere.text);
    assert.equal((await call('GET', mine, { key: elsewhere.json.value })).status, 404);
  });
});
