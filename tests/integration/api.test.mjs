// api.test.mjs - the api service on both metadata stores (SQLite, then a
// real PostgreSQL 15), with a real redis-server: bootstrap, personal API key
// authentication and scopes, projects and organizations in PostHog's REST
// shapes, keys shown once, hostile bodies, and publishing to Redis through
// the outbox (also across a Redis outage and a PostgreSQL restart).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { sleep } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');

// A SUBSCRIBE connection that keeps every message of one channel.
function subscribe(port, channel) {
  const sock = net.connect({ host: '127.0.0.1', port });
  let raw = '';
  sock.on('data', (d) => { raw += d; });
  sock.on('error', () => {});
  sock.write(`*2\r\n$9\r\nSUBSCRIBE\r\n$${channel.length}\r\n${channel}\r\n`);
  return {
    close: () => sock.destroy(),
    messages: () => [...raw.matchAll(/\$7\r\nmessage\r\n\$\d+\r\n[^\r]*\r\n\$\d+\r\n([^\r]*)\r\n/g)].map((m) => m[1]),
  };
}

async function waitFor(what, fn, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

for (const backend of ['sqlite', 'postgres']) {
  describe(`api on ${backend}`, () => {
    let redis, pg, api, dbUrl, tmp, boot, base;
    const env = () => ({ API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: dbUrl, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'warn', PUBLISH_RETRY: '100ms' });
    const call = async (method, p, { key, body, raw, headers = {} } = {}) => {
      const h = { ...headers };
      if (key !== undefined) h.Authorization = `Bearer ${key}`;
      if (body !== undefined || raw !== undefined) h['Content-Type'] = 'application/json';
      const r = await fetch(`${base}${p}`, { method, headers: h, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
      const text = await r.text();
      let json = null;
      try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
      return { status: r.status, json, text, headers: r.headers };
    };

    before(async () => {
      redis = await startRedis();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-api-'));
      if (backend === 'postgres') {
        pg = startPostgres();
        dbUrl = pg.database('meta');
      } else {
        dbUrl = `sqlite:${tmp}/var/meta.db`;
      }
      const { stdout } = await run(API, ['bootstrap'], { env: { ...process.env, ...env() } });
      boot = JSON.parse(stdout);
      api = await startServer(API, env(), { ready: true });
      base = `http://127.0.0.1:${api.port}`;
    });
    after(async () => {
      // Everything is stopped before anything is asserted, so a failure
      // leaves no server behind.
      const exit = api ? await api.stop() : { code: 0 };
      if (pg) pg.stop();
      await redis.stop();
      fs.rmSync(tmp, { recursive: true, force: true });
      assert.equal(exit.code, 0, `api exit: ${api?.stderr()}`);
    });

    test('bootstrap made a demo project once; a second run only reports it', async () => {
      assert.equal(boot.created, true);
      assert.match(boot.personal_api_key, /^phx_[2-9A-HJ-NP-Za-km-z]{44}$/);
      assert.match(boot.project_api_token, /^phc_/);
      assert.match(boot.project_secret_api_token, /^phs_/);
      const { stdout } = await run(API, ['bootstrap'], { env: { ...process.env, ...env() } });
      const again = JSON.parse(stdout);
      assert.equal(again.created, false);
      assert.deepEqual(again.projects.map((p) => p.api_token), [boot.project_api_token]);
      assert.ok(!stdout.includes(boot.personal_api_key) && !stdout.includes(boot.project_secret_api_token));
    });

    test('no key, a malformed and an unknown key: 401 with WWW-Authenticate', async () => {
      for (const key of [undefined, '', 'phx_nope', boot.personal_api_key + 'x']) {
        const r = await call('GET', '/api/projects/', { key });
        assert.equal(r.status, 401, `key ${key}`);
        assert.equal(r.json.type, 'authentication_error');
        assert.match(r.headers.get('www-authenticate'), /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:8000\/\.well-known\/oauth-protected-resource"$/);
        assert.ok(!r.text.includes(boot.project_api_token));
      }
    });

    test('projects and organizations in PostHog shapes; environments twin; other ids 404', async () => {
      const key = boot.personal_api_key;
      const list = await call('GET', '/api/projects/', { key });
      assert.equal(list.status, 200);
      assert.equal(list.json.count, 1);
      assert.equal(list.json.next, null);
      assert.equal(list.json.previous, null);
      const p = list.json.results[0];
      assert.equal(p.id, boot.project_id);
      assert.equal(p.api_token, boot.project_api_token);
      assert.equal(p.secret_api_token, `phs_...${boot.project_secret_api_token.slice(-4)}`);
      assert.equal(p.organization, boot.organization_id);
      const one = await call('GET', `/api/projects/${p.id}/`, { key });
      const twin = await call('GET', `/api/environments/${p.id}/`, { key });
      assert.equal(one.status, 200);
      assert.equal(twin.text, one.text);
      for (const id of [p.id + 1000, 'abc', '0', '99999999999999999999']) {
        const r = await call('GET', `/api/projects/${id}/`, { key });
        assert.equal(r.status, 404, `project ${id}`);
        assert.equal(r.json.type, 'invalid_request');
      }
      const orgs = await call('GET', '/api/organizations/', { key });
      assert.equal(orgs.status, 200);
      assert.deepEqual(orgs.json.results.map((o) => o.id), [boot.organization_id]);
      const bad = await call('GET', '/api/projects/?limit=x', { key });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.attr, 'limit');
    });

    test('the bootstrap project is in Redis for the fleet', async () => {
      const id = await waitFor('projects:tokens', () => redisCommand(redis.port, 'HGET', 'projects:tokens', boot.project_api_token));
      assert.equal(id, String(boot.project_id));
      const defs = JSON.parse(await redisCommand(redis.port, 'HGET', 'flags:definitions', String(boot.project_id)));
      assert.deepEqual(defs, { flags: [], group_type_mapping: {}, cohorts: {} });
      const crypto = await import('node:crypto');
      const hash = crypto.createHash('sha256').update(boot.project_secret_api_token).digest('hex');
      assert.equal(await redisCommand(redis.port, 'HGET', 'projects:secret_tokens', hash), String(boot.project_id));
    });

    test('a new project: secret shown once, published within a second', async () => {
      const key = boot.personal_api_key;
      const t0 = Date.now();
      const r = await call('POST', '/api/projects/', { key, body: { name: "O'Brien\"; DROP TABLE projects; --", timezone: 'Europe/Berlin' } });
      assert.equal(r.status, 201, r.text);
      assert.match(r.json.secret_api_token, /^phs_[2-9A-HJ-NP-Za-km-z]{44}$/);
      assert.equal(r.json.name, "O'Brien\"; DROP TABLE projects; --");
      assert.equal(r.json.timezone, 'Europe/Berlin');
      await waitFor('published', () => redisCommand(redis.port, 'HGET', 'projects:tokens', r.json.api_token), 1000);
      assert.ok(Date.now() - t0 < 1000);
      assert.equal(await redisCommand(redis.port, 'HGET', 'projects:timezones', String(r.json.id)), 'Europe/Berlin');
      const again = await call('GET', `/api/projects/${r.json.id}/`, { key });
      assert.equal(again.json.secret_api_token, `phs_...${r.json.secret_api_token.slice(-4)}`);
      const list = await call('GET', '/api/projects/?limit=1', { key });
      assert.equal(list.json.count, 2);
      assert.equal(list.json.results.length, 1);
      assert.equal(list.json.next, `http://127.0.0.1:8000/api/projects/?limit=1&offset=1`);
    });

    test('personal API keys: value shown once, scopes enforced, limits to projects, delete revokes', async () => {
      const key = boot.personal_api_key;
      const made = await call('POST', '/api/personal_api_keys/', { key, body: { label: 'flags only', scopes: ['feature_flag:read'] } });
      assert.equal(made.status, 201, made.text);
      assert.match(made.json.value, /^phx_/);
      assert.equal(made.json.mask_value, `phx_...${made.json.value.slice(-4)}`);
      const listed = await call('GET', '/api/personal_api_keys/', { key });
      assert.equal(listed.status, 200);
      assert.ok(!listed.text.includes(made.json.value));
      assert.ok(listed.json.results.some((k) => k.id === made.json.id && k.value === undefined));

      const denied = await call('GET', '/api/projects/', { key: made.json.value });
      assert.equal(denied.status, 403);
      assert.equal(denied.json.detail, "API key missing required scope 'project:read'");
      const w = await call('POST', '/api/projects/', { key: made.json.value, body: { name: 'x' } });
      assert.equal(w.status, 403);

      const scoped = await call('POST', '/api/personal_api_keys/', { key, body: { label: 'one project', scopes: ['project:read'], scoped_teams: [999999] } });
      assert.equal(scoped.status, 201, scoped.text);
      const hidden = await call('GET', `/api/projects/${boot.project_id}/`, { key: scoped.json.value });
      assert.equal(hidden.status, 404);

      const del = await call('DELETE', `/api/personal_api_keys/${made.json.id}/`, { key });
      assert.equal(del.status, 204);
      assert.equal((await call('GET', '/api/organizations/', { key: made.json.value })).status, 401);
      assert.equal((await call('DELETE', `/api/personal_api_keys/${made.json.id}/`, { key })).status, 404);
      const got = await call('GET', `/api/personal_api_keys/${scoped.json.id}/`, { key });
      assert.equal(got.status, 200);
      assert.deepEqual(got.json.scoped_teams, [999999]);
      assert.ok(got.json.last_used_at, 'last_used_at set by the request above');
    });

    test('hostile bodies: 400 with a JSON error, nothing stored', async () => {
      const key = boot.personal_api_key;
      const before = (await call('GET', '/api/personal_api_keys/', { key })).json.count;
      const cases = [
        { raw: '{"label":' },
        { raw: '[1,2]' },
        { raw: Buffer.from([0x7b, 0x22, 0x6c, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]) },
        { body: { label: 5, scopes: ['*'] } },
        { body: { label: 'x'.repeat(41), scopes: ['*'] } },
        { body: { label: 'ok', scopes: 'feature_flag:read' } },
        { body: { label: 'ok', scopes: ['feature_flag:delete'] } },
        { body: { label: 'ok', scopes: ["'; DROP TABLE personal_api_keys; --"] } },
        { body: { label: 'ok', scopes: [] } },
        { body: { label: 'ok', scopes: ['*'], scoped_teams: ['1'] } },
        { body: { label: 'ok', scopes: ['*'], scoped_organizations: ['not-a-uuid'] } },
      ];
      for (const c of cases) {
        const r = await call('POST', '/api/personal_api_keys/', { key, ...c });
        assert.equal(r.status, 400, `${JSON.stringify(c)}: ${r.text}`);
        assert.equal(r.json.type, 'validation_error');
        assert.equal(typeof r.json.detail, 'string');
      }
      for (const body of [{ name: 7 }, { name: '' }, { timezone: 'Europe/Berlin; DROP' }, { organization: 'x' }]) {
        const r = await call('POST', '/api/projects/', { key, body });
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      }
      const big = await call('POST', '/api/personal_api_keys/', { key, raw: `{"label":"${'a'.repeat(10 << 20)}"}` });
      assert.equal(big.status, 413);
      assert.equal((await call('GET', '/api/personal_api_keys/', { key })).json.count, before);
    });

    test('Redis down: changes commit, and reach Redis in order once it is back', async () => {
      const key = boot.personal_api_key;
      const port = redis.port;
      await redis.stop();
      const made = [];
      for (let i = 0; i < 5; i++) {
        const r = await call('POST', '/api/projects/', { key, body: { name: `while down ${i}` } });
        assert.equal(r.status, 201, r.text);
        made.push(r.json);
      }
      redis = await startRedis(port);
      const changed = subscribe(redis.port, 'flags:changed');
      await waitFor('all five published', async () => {
        for (const p of made) if (!(await redisCommand(redis.port, 'HGET', 'projects:tokens', p.api_token))) return false;
        return true;
      }, 10000);
      await sleep(100);
      changed.close();
      // Whatever the subscriber caught came in commit order.
      const ids = changed.messages().map(Number).filter((id) => made.some((p) => p.id === id));
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
    });

    if (backend === 'postgres') {
      test('PostgreSQL restarted: requests get 503 meanwhile, then the api reconnects by itself', async () => {
        const key = boot.personal_api_key;
        pg.halt();
        const down = await call('GET', '/api/projects/', { key });
        assert.equal(down.status, 503, down.text);
        assert.equal(down.json.type, 'server_error');
        assert.equal((await call('GET', '/_ready')).status, 503);
        pg.resume();
        await waitFor('reconnected', async () => {
          const r = await call('GET', '/api/projects/', { key });
          assert.ok(r.status === 200 || r.status === 503, r.text);
          return r.status === 200;
        }, 10000);
        const ready = await call('GET', '/_ready');
        assert.equal(ready.status, 200, ready.text);
      });
    }
  });
}
