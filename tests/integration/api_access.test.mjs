// api_access.test.mjs - who may do what through the api, on both metadata
// stores: every route against {no key, bad key, a key without the route's
// scope, a key of another organization, a good key}, with no answer showing
// another organization's data; hostile bodies on every write route; users
// (@me, argon2id passwords); token rotation, with retired tokens gone from
// the fleet; personal API keys on the flags service's /flags/definitions.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');
const FLAGS = path.join(BUILD, 'bin/flags');
const sha256 = (s) => createHash('sha256').update(s).digest('hex');

for (const backend of ['sqlite', 'postgres']) {
  describe(`api access on ${backend}`, () => {
    let redis, pg, api, flags, tmp, a, b, base, flagsBase, orgA, flagA, cohortA, noScopeKey, cohortsOnlyKey;
    const call = async (method, p, { key, body, raw } = {}) => {
      const h = {};
      if (key !== undefined) h.Authorization = `Bearer ${key}`;
      if (body !== undefined || raw !== undefined) h['Content-Type'] = 'application/json';
      const r = await fetch(`${base}${p}`, { method, headers: h, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
      const text = await r.text();
      let json = null;
      try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
      return { status: r.status, json, text, headers: r.headers };
    };
    const definitions = (token, bearer) => fetch(`${flagsBase}/flags/definitions?token=${token}`, { headers: { Authorization: `Bearer ${bearer}` } });
    const P = () => `/api/projects/${a.project_id}`;
    // What of organization A must never show in an answer to anyone else.
    const secretsOfA = () => [orgA, a.email, a.project_api_token, 'alpha-private-flag', 'alpha-private-cohort'];

    before(async () => {
      redis = await startRedis();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-apiaccess-'));
      const dbUrl = backend === 'postgres' ? (pg = startPostgres()).database('meta') : `sqlite:${tmp}/meta.db`;
      const env = { API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: dbUrl, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'warn', PUBLISH_RETRY: '100ms' };
      const runEnv = { env: { ...process.env, ...env } };
      a = JSON.parse((await run(API, ['bootstrap'], runEnv)).stdout);
      b = JSON.parse((await run(API, ['adduser', 'Other@Example.com'], runEnv)).stdout);
      api = await startServer(API, env, { ready: true });
      base = `http://127.0.0.1:${api.port}`;
      flags = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn', DEFINITIONS_REFRESH: '60s' });
      flagsBase = `http://127.0.0.1:${flags.port}`;
      orgA = a.organization_id;
      const made = async (p, body, status = 201) => {
        const r = await call('POST', p, { key: a.personal_api_key, body });
        assert.equal(r.status, status, `POST ${p}: ${r.text}`);
        return r.json;
      };
      flagA = await made(`${P()}/feature_flags/`, { key: 'alpha-private-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
      cohortA = await made(`${P()}/cohorts/`, { name: 'alpha-private-cohort', filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] } } });
      noScopeKey = (await made('/api/personal_api_keys/', { label: 'queries only', scopes: ['query:read'] })).value;
      // For the routes that need query:read itself.
      cohortsOnlyKey = (await made('/api/personal_api_keys/', { label: 'cohorts only', scopes: ['cohort:read'] })).value;
      assert.ok(flagA?.id && cohortA?.id && noScopeKey);
    });
    after(async () => {
      const exits = [];
      for (const s of [flags, api]) if (s) exits.push([await s.stop(), s]);
      if (pg) pg.stop();
      await redis.stop();
      fs.rmSync(tmp, { recursive: true, force: true });
      for (const [exit, s] of exits) assert.equal(exit.code, 0, s.stderr());
    });

    test('adduser: a second user in an organization of their own', async () => {
      assert.equal(b.created, true);
      assert.equal(b.email, 'other@example.com');
      assert.notEqual(b.organization_id, orgA);
      assert.match(b.personal_api_key, /^phx_/);
      const bad = await run(API, ['adduser', 'not an address'], { env: { ...process.env, DATABASE_URL: 'sqlite:' + path.join(tmp, 'other.db'), LOG_LEVEL: 'error' } }).catch((e) => e);
      assert.equal(bad.code, 1);
    });

    test('every route x {no key, bad key, key without the scope, key of another organization, good key}', async () => {
      // other: the status for organization B's key. Routes that are not about
      // a project or object of A answer B with B's own data (200/201).
      const routes = [
        { m: 'GET', p: () => '/api/organizations/', scope: 'organization:read', ok: 200, other: 200 },
        { m: 'PATCH', p: () => `/api/organizations/${orgA}/`, body: { feature_flags_quota_limited_until: null }, scope: 'organization:write', ok: 200, other: 404 },
        { m: 'GET', p: () => '/api/projects/', scope: 'project:read', ok: 200, other: 200 },
        { m: 'POST', p: () => '/api/projects/', body: { name: 'made in the matrix', organization: orgA }, scope: 'project:write', ok: 201, other: 400 },
        { m: 'GET', p: () => `${P()}/`, scope: 'project:read', ok: 200, other: 404 },
        { m: 'GET', p: () => `/api/environments/${a.project_id}/`, scope: 'project:read', ok: 200, other: 404 },
        { m: 'PATCH', p: () => `${P()}/`, body: { name: 'Demo project' }, scope: 'project:write', ok: 200, other: 404 },
        { m: 'PATCH', p: () => `${P()}/rotate_secret_token/`, scope: 'project:write', ok: 200, other: 404 },
        { m: 'PATCH', p: () => `${P()}/delete_secret_token_backup/`, scope: 'project:write', ok: 200, other: 404 },
        { m: 'GET', p: () => '/api/users/@me/', scope: 'user:read', ok: 200, other: 200 },
        { m: 'PATCH', p: () => '/api/users/@me/', body: { first_name: 'Matrix' }, scope: 'user:write', ok: 200, other: 200 },
        { m: 'GET', p: () => '/api/personal_api_keys/', scope: 'user:read', ok: 200, other: 200 },
        { m: 'POST', p: () => '/api/personal_api_keys/', body: { label: 'matrix', scopes: ['cohort:read'] }, scope: 'user:write', ok: 201, other: 201 },
        { m: 'GET', p: (s) => `/api/personal_api_keys/${s.key}/`, prepare: 'key', scope: 'user:read', ok: 200, other: 404 },
        { m: 'DELETE', p: (s) => `/api/personal_api_keys/${s.key}/`, prepare: 'key', scope: 'user:write', ok: 204, other: 404 },
        { m: 'GET', p: () => `${P()}/feature_flags/`, scope: 'feature_flag:read', ok: 200, other: 404 },
        { m: 'POST', p: () => `${P()}/feature_flags/`, body: { key: 'matrix-flag', filters: { groups: [] } }, scope: 'feature_flag:write', ok: 201, other: 404 },
        { m: 'GET', p: () => `${P()}/feature_flags/${flagA.id}/`, scope: 'feature_flag:read', ok: 200, other: 404 },
        { m: 'GET', p: () => `/api/environments/${a.project_id}/feature_flags/${flagA.id}/`, scope: 'feature_flag:read', ok: 200, other: 404 },
        { m: 'PATCH', p: () => `${P()}/feature_flags/${flagA.id}/`, body: { name: 'patched' }, scope: 'feature_flag:write', ok: 200, other: 404 },
        { m: 'DELETE', p: (s) => `${P()}/feature_flags/${s.flag}/`, prepare: 'flag', scope: 'feature_flag:write', ok: 204, other: 404 },
        { m: 'GET', p: () => `${P()}/cohorts/`, scope: 'cohort:read', ok: 200, other: 404 },
        { m: 'POST', p: () => `${P()}/cohorts/`, body: { name: 'matrix', filters: { properties: { type: 'AND', values: [] } } }, scope: 'cohort:write', ok: 201, other: 404 },
        { m: 'GET', p: () => `${P()}/cohorts/${cohortA.id}/`, scope: 'cohort:read', ok: 200, other: 404 },
        { m: 'PATCH', p: () => `${P()}/cohorts/${cohortA.id}/`, body: { description: 'patched' }, scope: 'cohort:write', ok: 200, other: 404 },
        { m: 'DELETE', p: (s) => `${P()}/cohorts/${s.cohort}/`, prepare: 'cohort', scope: 'cohort:write', ok: 204, other: 404 },
        { m: 'GET', p: () => `${P()}/groups_types/`, scope: 'group:read', ok: 200, other: 404 },
        { m: 'POST', p: () => `${P()}/groups_types/`, body: { group_type: 'company' }, scope: 'group:write', ok: 201, other: 404, once: true },
        { m: 'GET', p: () => `/api/feature_flag/local_evaluation?token=${a.project_api_token}`, scope: 'feature_flag:read', ok: 200, other: 404 },
        { m: 'GET', p: () => `${P()}/events/`, scope: 'query:read', ok: 200, other: 404 },
        { m: 'GET', p: () => `${P()}/persons/?distinct_id=x`, scope: 'person:read', ok: 200, other: 404 },
        // reset_token last: it changes A's public token, which later rows use.
        { m: 'PATCH', p: () => `${P()}/reset_token/`, scope: 'project:write', ok: 200, other: 404 },
      ];
      const prepare = {
        key: async () => ({ key: (await call('POST', '/api/personal_api_keys/', { key: a.personal_api_key, body: { label: 'victim', scopes: ['cohort:read'] } })).json.id }),
        flag: async () => ({ flag: (await call('POST', `${P()}/feature_flags/`, { key: a.personal_api_key, body: { key: `victim-${Date.now()}`, filters: { groups: [] } } })).json.id }),
        cohort: async () => ({ cohort: (await call('POST', `${P()}/cohorts/`, { key: a.personal_api_key, body: { name: 'victim', filters: { properties: { type: 'AND', values: [] } } } })).json.id }),
      };
      const badKey = `phx_${'Z'.repeat(43)}`;
      for (const r of routes) {
        const state = r.prepare ? await prepare[r.prepare]() : {};
        const url = r.p(state);
        const what = `${r.m} ${url}`;
        const noKey = await call(r.m, url, { body: r.body });
        assert.equal(noKey.status, 401, `${what} without a key: ${noKey.text}`);
        assert.match(noKey.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/, what);
        const bad = await call(r.m, url, { key: badKey, body: r.body });
        assert.equal(bad.status, 401, `${what} with an unknown key: ${bad.text}`);
        const noScope = await call(r.m, url, { key: r.scope.startsWith('query:') ? cohortsOnlyKey : noScopeKey, body: r.body });
        assert.equal(noScope.status, 403, `${what} without ${r.scope}: ${noScope.text}`);
        assert.equal(noScope.json.detail, `API key missing required scope '${r.scope}'`);
        const other = await call(r.m, url, { key: b.personal_api_key, body: r.body });
        assert.equal(other.status, r.other, `${what} with organization B's key: ${other.text}`);
        for (const res of [noKey, bad, noScope, other]) {
          assert.ok(res.status === 204 || res.json !== null, `${what}: a JSON body (${res.text})`);
          for (const s of secretsOfA()) assert.ok(!res.text.includes(s), `${what} (${res.status}) shows ${s}: ${res.text}`);
        }
        const good = await call(r.m, url, { key: a.personal_api_key, body: r.body });
        assert.equal(good.status, r.ok, `${what} with A's key: ${good.text}`);
        if (url.endsWith('/reset_token/')) a.project_api_token = good.json.api_token;
      }
      // B's own project list shows none of A's.
      const mine = await call('GET', '/api/projects/', { key: b.personal_api_key });
      assert.deepEqual(mine.json.results.map((p) => p.organization), mine.json.results.map(() => b.organization_id));
    });

    test('users: @me in PostHog\'s shape; password changes need the current one (argon2id)', async () => {
      const key = a.personal_api_key;
      const me = await call('GET', '/api/users/@me/', { key });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.json.email, 'demo@example.com');
      assert.deepEqual(me.json.organizations.map((o) => [o.id, o.membership_level]), [[orgA, 15]]);
      assert.ok(!me.text.includes('argon2'), 'no password hash in the answer');

      const patch = (body) => call('PATCH', '/api/users/@me/', { key, body });
      let r = await patch({ password: 'a new secret value' });
      assert.equal(r.status, 400);
      assert.equal(r.json.attr, 'current_password');
      r = await patch({ password: 'a new secret value', current_password: 'wrong' });
      assert.equal(r.status, 400);
      assert.equal(r.json.detail, 'Your current password is incorrect.');
      r = await patch({ password: 'short', current_password: a.password });
      assert.equal(r.status, 400);
      assert.equal(r.json.attr, 'password');
      r = await patch({ password: 'a new secret value', current_password: a.password });
      assert.equal(r.status, 200, r.text);
      r = await patch({ password: 'a third secret value', current_password: a.password });
      assert.equal(r.status, 400, 'the old password no longer counts');
      r = await patch({ password: a.password, current_password: 'a new secret value' });
      assert.equal(r.status, 200, r.text);

      r = await patch({ email: 'other@example.com' });
      assert.equal(r.status, 400);
      assert.equal(r.json.attr, 'email');
      r = await patch({ email: 'no-at-sign' });
      assert.equal(r.status, 400);
      r = await patch({ email: 'Renamed@Example.com', first_name: 'Ada' });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.email, 'renamed@example.com');
      assert.equal(r.json.first_name, 'Ada');
      r = await patch({ email: 'demo@example.com' });
      assert.equal(r.status, 200);
    });

    test('hostile bodies on every write route: 400 (413 when too big) with a JSON error, never 5xx, nothing stored', async () => {
      const key = a.personal_api_key;
      const counts = async () => {
        const c = {};
        for (const [name, p] of [['projects', '/api/projects/'], ['keys', '/api/personal_api_keys/'], ['flags', `${P()}/feature_flags/`], ['cohorts', `${P()}/cohorts/`]]) {
          c[name] = (await call('GET', `${p}?limit=1`, { key })).json.count;
        }
        c.groupTypes = (await call('GET', `${P()}/groups_types/`, { key })).json.length;
        const me = (await call('GET', '/api/users/@me/', { key })).json;
        c.me = [me.email, me.first_name];
        const flag = (await call('GET', `${P()}/feature_flags/${flagA.id}/`, { key })).json;
        c.flag = [flag.version, flag.name, JSON.stringify(flag.filters)];
        const cohort = (await call('GET', `${P()}/cohorts/${cohortA.id}/`, { key })).json;
        c.cohort = [cohort.version, cohort.name, cohort.description];
        const project = (await call('GET', `${P()}/`, { key })).json;
        c.secret = project.secret_api_token;
        c.project = [project.name, project.timezone, project.api_token];
        return c;
      };
      const flagFilters = { groups: [{ properties: [], rollout_percentage: 50 }] };
      const cohortFilters = { properties: { type: 'AND', values: [] } };
      // base: a body the route accepts; strings/bools/others: its fields.
      const routes = [
        { m: 'PATCH', p: `/api/organizations/${orgA}/`, base: {}, others: ['feature_flags_quota_limited_until'] },
        { m: 'POST', p: '/api/projects/', base: {}, strings: ['name', 'timezone', 'organization'] },
        { m: 'PATCH', p: `${P()}/`, base: {}, strings: ['name', 'timezone'] },
        { m: 'PATCH', p: `${P()}/reset_token/`, rawOnly: true },
        { m: 'PATCH', p: `${P()}/rotate_secret_token/`, rawOnly: true },
        { m: 'PATCH', p: `${P()}/delete_secret_token_backup/`, rawOnly: true },
        { m: 'PATCH', p: '/api/users/@me/', base: {}, strings: ['first_name', 'email', 'password'] },
        { m: 'POST', p: '/api/personal_api_keys/', base: { label: 'ok', scopes: ['cohort:read'] }, strings: ['label'], others: ['scopes', 'scoped_teams', 'scoped_organizations'] },
        { m: 'POST', p: `${P()}/feature_flags/`, base: { key: 'hostile-new', filters: flagFilters }, strings: ['key', 'name', 'evaluation_runtime', 'bucketing_identifier'], bools: ['active', 'ensure_experience_continuity'], others: ['filters', 'evaluation_contexts'] },
        { m: 'PATCH', p: `${P()}/feature_flags/${flagA.id}/`, base: {}, strings: ['key', 'name', 'evaluation_runtime'], bools: ['active', 'deleted'], others: ['filters'] },
        { m: 'POST', p: `${P()}/cohorts/`, base: { name: 'ok', filters: cohortFilters }, strings: ['name', 'description'], bools: ['deleted'], others: ['filters'] },
        { m: 'PATCH', p: `${P()}/cohorts/${cohortA.id}/`, base: {}, strings: ['name', 'description'], bools: ['deleted'], others: ['filters'] },
        { m: 'POST', p: `${P()}/groups_types/`, base: { group_type: 'ok' }, strings: ['group_type'] },
      ];
      const raws = [
        '{"name":',
        '[1,2]',
        '"a string"',
        '{"name": "a\\u0000b", "key": "a\\u0000b", "label": "a\\u0000b", "group_type": "a\\u0000b", "first_name": "a\\u0000b"}',
        Buffer.from('{"name":"\xff\xfe","key":"\xff","label":"\xff","group_type":"\xff","first_name":"\xff"}', 'latin1'),
      ];
      const start = await counts();
      for (const r of routes) {
        const expect400 = async (opts, what) => {
          const res = await call(r.m, r.p, { key, ...opts });
          assert.equal(res.status, 400, `${r.m} ${r.p} ${what}: ${res.text}`);
          assert.equal(res.json?.type, 'validation_error', `${r.m} ${r.p} ${what}: ${res.text}`);
          assert.equal(typeof res.json.detail, 'string');
          return res;
        };
        // The token actions take no fields: only bodies that are not a JSON
        // object apply to them.
        for (const raw of r.rawOnly ? raws.slice(0, 3) : raws) await expect400({ raw }, `raw ${String(raw).slice(0, 30)}`);
        const big = await call(r.m, r.p, { key, raw: `{"name":"${'a'.repeat(10 << 20)}"}` });
        assert.equal(big.status, 413, `${r.m} ${r.p}: 10 MB`);
        assert.equal(big.json?.type, 'validation_error');
        if (r.rawOnly) continue;
        for (const f of r.strings ?? []) {
          for (const v of [12345, { a: 1 }, ['x'], true, 'x'.repeat(100000)]) {
            const res = await expect400({ body: { ...r.base, [f]: v } }, `${f}=${JSON.stringify(v).slice(0, 20)}`);
            assert.equal(res.json.attr, f, `${r.m} ${r.p} ${f}: ${res.text}`);
          }
        }
        for (const f of r.bools ?? []) {
          for (const v of ['yes', 2, {}, [true]]) await expect400({ body: { ...r.base, [f]: v } }, `${f}=${JSON.stringify(v)}`);
        }
        for (const f of r.others ?? []) {
          for (const v of ['text', 12.5, { groups: 'x', properties: 'x' }, [{}], -1]) await expect400({ body: { ...r.base, [f]: v } }, `${f}=${JSON.stringify(v)}`);
        }
      }
      // SQL metacharacters in every free-text field: refused by a field's
      // character set, or stored and answered byte for byte; never a 5xx,
      // and the tables are all still there (the counts below read them).
      const sql = `x'; DROP TABLE users; --" \\ %_ $1 ?`;
      for (const r of routes) {
        for (const f of r.strings ?? []) {
          if (f === 'password' || f === 'email' || f === 'organization') continue;
          const isNew = r.m === 'POST';
          const res = await call(r.m, r.p, { key, body: { ...r.base, [f]: sql } });
          assert.ok(res.status === 400 || res.status === 200 || res.status === 201, `${r.m} ${r.p} ${f}: ${res.text}`);
          if (res.status >= 400) continue;
          assert.equal(res.json[f === 'group_type' ? 'group_type' : f], sql, `${f} stored as sent`);
          // Put things back so the counts compare.
          if (isNew && r.p.endsWith('/feature_flags/')) await call('DELETE', `${r.p}${res.json.id}/`, { key });
          if (isNew && r.p.endsWith('/cohorts/')) await call('DELETE', `${r.p}${res.json.id}/`, { key });
          if (isNew && r.p.endsWith('/personal_api_keys/')) await call('DELETE', `${r.p}${res.json.id}/`, { key });
          if (isNew && r.p === '/api/projects/') start.projects++;
          if (isNew && r.p.endsWith('/groups_types/')) start.groupTypes++;
        }
      }
      await call('PATCH', `${P()}/feature_flags/${flagA.id}/`, { key, body: { name: start.flag[1] } });
      await call('PATCH', `${P()}/cohorts/${cohortA.id}/`, { key, body: { name: start.cohort[1], description: start.cohort[2] } });
      await call('PATCH', '/api/users/@me/', { key, body: { first_name: start.me[1] } });
      await call('PATCH', `${P()}/`, { key, body: { name: start.project[0] } });
      const end = await counts();
      // The flag and cohort were written back to their names: only versions moved.
      end.flag[0] = start.flag[0];
      end.cohort[0] = start.cohort[0];
      assert.deepEqual(end, start);
    });

    test('PATCH a project: name and time zone; the fleet gets the zone', async () => {
      const key = a.personal_api_key;
      const r = await call('PATCH', `${P()}/`, { key, body: { timezone: 'Europe/Berlin' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.timezone, 'Europe/Berlin');
      assert.equal(r.json.name, 'Demo project');
      assert.ok(r.json.secret_api_token === null || r.json.secret_api_token.startsWith('phs_...'), 'never the secret in full');
      await within(1000, 'the zone in Redis', async () => (await redisCommand(redis.port, 'HGET', 'projects:timezones', String(a.project_id))) === 'Europe/Berlin');
      assert.equal((await call('PATCH', `${P()}/`, { key, body: { timezone: 'UTC' } })).status, 200);
    });

    test('token rotation: the backup secret works until dropped; retired tokens leave the fleet', async () => {
      const key = a.personal_api_key;
      // (The matrix rotated once already: start from a fresh pair.)
      let r = await call('PATCH', `${P()}/rotate_secret_token/`, { key });
      assert.equal(r.status, 200, r.text);
      const first = r.json.secret_api_token;
      r = await call('PATCH', `${P()}/rotate_secret_token/`, { key });
      const second = r.json.secret_api_token;
      assert.match(second, /^phs_/);
      assert.equal(r.json.secret_api_token_backup, `phs_...${first.slice(-4)}`);
      await within(1000, 'both secrets work at the fleet', async () =>
        (await definitions(a.project_api_token, first)).status === 200 && (await definitions(a.project_api_token, second)).status === 200);
      assert.equal((await call('GET', `/api/feature_flag/local_evaluation?token=${a.project_api_token}`, { key: first })).status, 200);

      r = await call('PATCH', `${P()}/delete_secret_token_backup/`, { key });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.secret_api_token_backup, null);
      await within(1000, 'the dropped backup stops working', async () => (await definitions(a.project_api_token, first)).status === 401);
      assert.equal(await redisCommand(redis.port, 'HGET', 'projects:secret_tokens', sha256(first)), null);
      assert.equal((await definitions(a.project_api_token, second)).status, 200);
      assert.equal((await call('GET', `/api/feature_flag/local_evaluation?token=${a.project_api_token}`, { key: first })).status, 401);

      const oldToken = a.project_api_token;
      r = await call('PATCH', `${P()}/reset_token/`, { key });
      assert.equal(r.status, 200, r.text);
      a.project_api_token = r.json.api_token;
      assert.notEqual(a.project_api_token, oldToken);
      await within(1000, 'the new public token works', async () => (await definitions(a.project_api_token, second)).status === 200);
      assert.equal(await redisCommand(redis.port, 'HGET', 'projects:tokens', oldToken), null);
      const flagsOld = await fetch(`${flagsBase}/flags?v=2`, { method: 'POST', body: JSON.stringify({ token: oldToken, distinct_id: 'x' }) });
      assert.equal(flagsOld.status, 401);

      // A member who is not an admin may not rotate: B joins nothing of A's,
      // so the nearest case is B's own project, which B owns: allowed.
      const own = await call('PATCH', `/api/projects/${b.project_id}/rotate_secret_token/`, { key: b.personal_api_key });
      assert.equal(own.status, 200, own.text);
    });

    test('personal API keys at the flags service: feature_flag:read and reach, revoked within a second', async () => {
      const key = a.personal_api_key;
      const made = async (body) => (await call('POST', '/api/personal_api_keys/', { key, body: { label: 'fleet', ...body } })).json;
      // Made in this order, the last one a key that works: once it does, the
      // fleet's table holds all four (each publication replaces it whole).
      const elsewhere = await made({ scopes: ['feature_flag:read'], scoped_teams: [b.project_id] });
      const unrelated = await made({ scopes: ['cohort:read'] });
      const reader = await made({ scopes: ['feature_flag:read'] });
      const writer = await made({ scopes: ['feature_flag:write'] });
      await within(1000, 'the last key made works', async () => (await definitions(a.project_api_token, writer.value)).status === 200);
      const got = await definitions(a.project_api_token, reader.value);
      assert.ok((await got.json()).flags.some((f) => f.key === 'alpha-private-flag'));
      assert.equal((await definitions(a.project_api_token, reader.value)).status, 200);
      assert.equal((await definitions(a.project_api_token, elsewhere.value)).status, 401, 'limited to another project');
      assert.equal((await definitions(a.project_api_token, unrelated.value)).status, 401, 'no feature_flag scope');
      assert.equal((await definitions(b.project_api_token, reader.value)).status, 401, 'another organization');
      assert.equal((await definitions(b.project_api_token, b.personal_api_key)).status, 200);
      // Only hashes are in Redis.
      const table = await redisCommand(redis.port, 'HGETALL', 'personal_api_keys');
      assert.ok(!JSON.stringify(table).includes('phx_'));
      assert.ok(table.includes(sha256(reader.value)));

      assert.equal((await call('DELETE', `/api/personal_api_keys/${reader.id}/`, { key })).status, 204);
      await within(1000, 'a deleted key stops working', async () => (await definitions(a.project_api_token, reader.value)).status === 401);
      // A project made later is reachable by the keys of its organization.
      const later = await call('POST', '/api/projects/', { key, body: { name: 'later' } });
      await within(1000, 'the new project is readable with the key', async () => (await definitions(later.json.api_token, writer.value)).status === 200);
    });
  });
}
