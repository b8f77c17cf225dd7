// api_flags.test.mjs - flag administration through the api, served by the
// flags fleet, on both metadata stores: posthog-node through the edge
// router (remote evaluation, and local evaluation authenticated by a
// personal API key) sees a flag made, changed and deleted over REST within a
// second; the api refuses filters PostHog would refuse, each with a 400
// naming the field; flag dependencies reach the fleet as keys with their
// evaluation chain.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PostHog } from 'posthog-node';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { startEdge } from './lib/edge.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');
const FLAGS = path.join(BUILD, 'bin/flags');
const quiet = { flushAt: 1000, flushInterval: 600000, sendFeatureFlagEvent: false };

for (const backend of ['sqlite', 'postgres']) {
  describe(`flag administration on ${backend}`, () => {
    let redis, pg, api, flags, edge, tmp, boot, base, local, remote;
    const call = async (method, p, body) => {
      const r = await fetch(`${base}${p}`, {
        method,
        headers: { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, json: text ? JSON.parse(text) : null, text };
    };
    const flagsPath = () => `/api/projects/${boot.project_id}/feature_flags/`;

    before(async () => {
      redis = await startRedis();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-apiflags-'));
      const dbUrl = backend === 'postgres' ? (pg = startPostgres()).database('meta') : `sqlite:${tmp}/meta.db`;
      const env = { API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: dbUrl, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'warn' };
      boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...env } })).stdout);
      api = await startServer(API, env, { ready: true });
      base = `http://127.0.0.1:${api.port}`;
      // The fleet re-reads everything only every minute here: what it sees
      // within a second came through flags:changed.
      flags = await startServer(FLAGS, { FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn', DEFINITIONS_REFRESH: '60s' });
      edge = await startEdge({ api: api.port, flags: flags.port });
      const host = edge.url;
      remote = new PostHog(boot.project_api_token, { host, ...quiet });
      // Local evaluation polls /flags/definitions with the personal API key
      // (phx_), as posthog-node users configure it.
      local = new PostHog(boot.project_api_token, { host, personalApiKey: boot.personal_api_key, featureFlagsPollingInterval: 100, ...quiet });
      await within(3000, 'the fleet knows the project', async () => (await fetch(`${host}/flags?v=2`, {
        method: 'POST', body: JSON.stringify({ token: boot.project_api_token, distinct_id: 'x' }),
      })).status === 200);
    });
    after(async () => {
      await local?.shutdown();
      await remote?.shutdown();
      // Everything is stopped before anything is asserted, so a failure
      // leaves no server behind.
      if (edge) await edge.stop();
      const exits = [];
      for (const s of [flags, api]) if (s) exits.push([await s.stop(), s]);
      if (pg) pg.stop();
      await redis.stop();
      fs.rmSync(tmp, { recursive: true, force: true });
      for (const [exit, s] of exits) assert.equal(exit.code, 0, s.stderr());
    });

    test('create, change and delete over REST: remote and local evaluation follow within a second', async () => {
      const made = await call('POST', flagsPath(), {
        key: 'rest-flag', name: 'made over REST', filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
      });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.json.version, 1);
      assert.equal(made.json.active, true);
      assert.deepEqual(made.json.filters, { groups: [{ properties: [], rollout_percentage: 100 }] });
      await within(1000, 'remote sees it', async () => (await remote.getFeatureFlag('rest-flag', 'user-1')) === true);
      await within(1000, 'local sees it', async () => (await local.getFeatureFlag('rest-flag', 'user-1', { onlyEvaluateLocally: true })) === true);

      const off = await call('PATCH', `${flagsPath()}${made.json.id}/`, { filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
      assert.equal(off.status, 200, off.text);
      assert.equal(off.json.version, 2);
      assert.equal(off.json.key, 'rest-flag');
      await within(1000, 'remote sees 0 %', async () => (await remote.getFeatureFlag('rest-flag', 'user-1')) === false);
      await within(1000, 'local sees 0 %', async () => (await local.getFeatureFlag('rest-flag', 'user-1', { onlyEvaluateLocally: true })) === false);

      const list = await call('GET', flagsPath());
      assert.equal(list.status, 200);
      assert.deepEqual(list.json.results.map((f) => f.key), ['rest-flag']);

      assert.equal((await call('DELETE', `${flagsPath()}${made.json.id}/`)).status, 204);
      await within(1000, 'remote: gone', async () => (await remote.getFeatureFlag('rest-flag', 'user-1')) === undefined);
      await within(1000, 'local: gone', async () => (await local.getFeatureFlag('rest-flag', 'user-1', { onlyEvaluateLocally: true })) === undefined);
      assert.equal((await call('GET', `${flagsPath()}${made.json.id}/`)).status, 404);
      // A deleted flag's key can be used again.
      const again = await call('POST', flagsPath(), { key: 'rest-flag', filters: { groups: [] } });
      assert.equal(again.status, 201, again.text);
      assert.equal((await call('DELETE', `${flagsPath()}${again.json.id}/`)).status, 204);
    });

    test('PostHog refuses these filters; so does the api, naming the field, storing nothing', async () => {
      const ok = await call('POST', flagsPath(), { key: 'taken', filters: { groups: [] } });
      assert.equal(ok.status, 201, ok.text);
      const cases = [
        [{ key: 'taken', filters: { groups: [] } }, 'key', /already a feature flag with this key/],
        [{ filters: { groups: [] } }, 'key', /required/],
        [{ key: 'bad key!', filters: { groups: [] } }, 'key', /letters, numbers/],
        [{ key: 'k1', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', operator: 'sounds_like' }] }] } }, 'filters', /unknown operator/],
        [{ key: 'k2', filters: { groups: [{ rollout_percentage: 101 }] } }, 'filters', /0 to 100/],
        [{ key: 'k3', filters: { multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 40 }] } } }, 'filters', /sum to 100/],
        [{ key: 'k4', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 424242 }] }] } }, 'filters', /Cohort with id 424242/],
        [{ key: 'k5', filters: { groups: [{ properties: [{ key: '999999', type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] } }, 'filters', /unknown flag/],
        [{ key: 'k6', filters: { groups: [{ variant: 'nope' }] } }, 'filters', /variant/],
        [{ key: 'k7', filters: 'everyone' }, 'filters', /object/],
        [{ key: 'k8', filters: { groups: [] }, active: 'yes' }, 'active', /boolean/],
        [{ key: 'k9', filters: { groups: [] }, evaluation_runtime: 'browser' }, 'evaluation_runtime', /valid choice/],
        [{ key: "k'; DROP TABLE feature_flags; --", filters: { groups: [] } }, 'key', /letters, numbers/],
      ];
      for (const [body, attr, detail] of cases) {
        const r = await call('POST', flagsPath(), body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(r.json.type, 'validation_error');
        assert.equal(r.json.attr, attr, r.text);
        assert.match(r.json.detail, detail);
      }
      const list = await call('GET', flagsPath());
      assert.deepEqual(list.json.results.map((f) => f.key), ['taken']);
    });

    test('dependencies: stored by id, served by key with their chain; cycles refused', async () => {
      const a = await call('POST', flagsPath(), { key: 'dep-a', filters: { groups: [{ rollout_percentage: 100 }] } });
      const b = await call('POST', flagsPath(), {
        key: 'dep-b',
        filters: { groups: [{ properties: [{ key: String(a.json.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] },
      });
      assert.equal(b.status, 201, b.text);
      const c = await call('POST', flagsPath(), {
        key: 'dep-c',
        filters: { groups: [{ properties: [{ key: b.json.id, type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] },
      });
      assert.equal(c.status, 201, c.text);
      let defs;
      await within(1000, 'published', async () => {
        defs = JSON.parse(await redisCommand(redis.port, 'HGET', 'flags:definitions', String(boot.project_id)));
        return defs.flags.some((f) => f.key === 'dep-c');
      });
      const prop = defs.flags.find((f) => f.key === 'dep-c').filters.groups[0].properties[0];
      assert.equal(prop.key, 'dep-b');
      assert.deepEqual(prop.dependency_chain, ['dep-a', 'dep-b']);
      await within(1000, 'remote evaluates the chain', async () => (await remote.getFeatureFlag('dep-c', 'user-9')) === true);

      const cycle = await call('PATCH', `${flagsPath()}${a.json.id}/`, {
        filters: { groups: [{ properties: [{ key: String(c.json.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] },
      });
      assert.equal(cycle.status, 400, cycle.text);
      assert.match(cycle.json.detail, /Circular dependency/);
      assert.equal((await call('GET', `${flagsPath()}${a.json.id}/`)).json.version, 1);
    });

    test('the flags quota: set by an admin, quotaLimited appears; lifted, flags come back', async () => {
      const host = `http://127.0.0.1:${flags.port}`;
      const ask = async () => (await fetch(`${host}/flags?v=2`, {
        method: 'POST', body: JSON.stringify({ token: boot.project_api_token, distinct_id: 'quota-user' }),
      })).json();
      const on = await call('POST', flagsPath(), { key: 'quota-visible', filters: { groups: [{ rollout_percentage: 100 }] } });
      assert.equal(on.status, 201, on.text);
      await within(1000, 'flag served', async () => (await ask()).flags['quota-visible']?.enabled === true);

      const until = Math.floor(Date.now() / 1000) + 3600;
      const set = await call('PATCH', `/api/organizations/${boot.organization_id}/`, { feature_flags_quota_limited_until: until });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.json.feature_flags_quota_limited_until, until);
      await within(1000, 'quotaLimited', async () => {
        const r = await ask();
        return Array.isArray(r.quotaLimited) && r.quotaLimited.includes('feature_flags') && Object.keys(r.flags).length === 0;
      });
      assert.equal(await remote.getFeatureFlag('quota-visible', 'quota-user'), undefined);

      for (const body of [{}, { feature_flags_quota_limited_until: 'soon' }, { feature_flags_quota_limited_until: -5 }]) {
        const r = await call('PATCH', `/api/organizations/${boot.organization_id}/`, body);
        assert.equal(r.status, 400, r.text);
      }
      assert.equal((await call('PATCH', '/api/organizations/00000000-0000-4000-8000-000000000000/', { feature_flags_quota_limited_until: null })).status, 404);

      const lift = await call('PATCH', `/api/organizations/${boot.organization_id}/`, { feature_flags_quota_limited_until: null });
      assert.equal(lift.status, 200, lift.text);
      assert.equal(lift.json.feature_flags_quota_limited_until, null);
      await within(1000, 'flags back', async () => (await ask()).flags['quota-visible']?.enabled === true);
    });

    test('/api/feature_flag/local_evaluation: the same bytes as /flags/definitions, by secret token or personal key', async () => {
      const host = `http://127.0.0.1:${flags.port}`;
      const tok = encodeURIComponent(boot.project_api_token);
      const fleet = await fetch(`${host}/flags/definitions?token=${tok}`, { headers: { Authorization: `Bearer ${boot.project_secret_api_token}` } });
      assert.equal(fleet.status, 200);
      const want = await fleet.text();
      assert.ok(JSON.parse(want).flags.length > 0);
      for (const bearer of [boot.project_secret_api_token, boot.personal_api_key]) {
        const r = await fetch(`${base}/api/feature_flag/local_evaluation?token=${tok}&send_cohorts`, { headers: { Authorization: `Bearer ${bearer}` } });
        assert.equal(r.status, 200);
        assert.equal(await r.text(), want);
      }
      const cases = [
        [`?token=${tok}`, undefined, 401],
        [`?token=${tok}`, 'phs_not_the_secret', 401],
        [`?token=${tok}`, 'phx_unknown', 401],
        ['?token=phc_unknown', boot.personal_api_key, 401],
        ['', boot.personal_api_key, 401],
      ];
      for (const [q, bearer, status] of cases) {
        const r = await fetch(`${base}/api/feature_flag/local_evaluation${q}`, { headers: bearer ? { Authorization: `Bearer ${bearer}` } : {} });
        assert.equal(r.status, status, `${q} ${bearer}`);
        assert.ok(!(await r.text()).includes('"flags"'));
      }
      const narrow = await call('POST', '/api/personal_api_keys/', { label: 'no flags', scopes: ['project:read'] });
      const r = await fetch(`${base}/api/feature_flag/local_evaluation?token=${tok}`, { headers: { Authorization: `Bearer ${narrow.json.value}` } });
      assert.equal(r.status, 403);
    });

    test('cohorts: a flag targets one, the fleet evaluates it; bad groups, self-inclusion and deleting one in use refused', async () => {
      const group = { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] }] };
      const co = await call('POST', `/api/projects/${boot.project_id}/cohorts/`, { name: 'Pro users', filters: { properties: group } });
      assert.equal(co.status, 201, co.text);
      assert.deepEqual(co.json.filters, { properties: group });
      const f = await call('POST', flagsPath(), {
        key: 'pro-cohort', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: co.json.id }], rollout_percentage: 100 }] },
      });
      assert.equal(f.status, 201, f.text);
      await within(1000, 'remote: in the cohort', async () => (await remote.getFeatureFlag('pro-cohort', 'c-user', { personProperties: { plan: 'pro' } })) === true);
      assert.equal(await remote.getFeatureFlag('pro-cohort', 'c-user', { personProperties: { plan: 'free' } }), false);
      await within(1000, 'local: in the cohort', async () => (await local.getFeatureFlag('pro-cohort', 'c-user', { personProperties: { plan: 'pro' }, onlyEvaluateLocally: true })) === true);

      const cpath = `/api/projects/${boot.project_id}/cohorts/`;
      for (const body of [
        { name: 'x' },
        { filters: { properties: { type: 'XOR', values: [] } } },
        { filters: { properties: { type: 'AND', values: [{ key: 'a', operator: 'near' }] } } },
        { filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 999999 }] } } },
        { filters: { properties: group }, is_static: true },
      ]) {
        const r = await call('POST', cpath, body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(r.json.type, 'validation_error');
      }
      const outer = await call('POST', cpath, { name: 'outer', filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: co.json.id }] } } });
      assert.equal(outer.status, 201, outer.text);
      const loop = await call('PATCH', `${cpath}${co.json.id}/`, { filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: outer.json.id }] } } });
      assert.equal(loop.status, 400, loop.text);
      assert.match(loop.json.detail, /cannot include itself/);
      const inUse = await call('DELETE', `${cpath}${co.json.id}/`);
      assert.equal(inUse.status, 400, inUse.text);
      assert.match(inUse.json.detail, /used by (feature flag "pro-cohort"|cohort)/);
      assert.equal((await call('DELETE', `${cpath}${outer.json.id}/`)).status, 204);
      assert.equal((await call('GET', `${cpath}${outer.json.id}/`)).status, 404);
      const renamed = await call('PATCH', `${cpath}${co.json.id}/`, { name: 'Pro plan' });
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.json.version, 2);
      assert.deepEqual(renamed.json.filters, { properties: group });
    });

    test('group types: mapped over REST, published, and a group flag aggregates by them', async () => {
      const gpath = `/api/projects/${boot.project_id}/groups_types/`;
      const names = ['company', 'team', 'workspace', 'region', 'account'];
      for (const [i, name] of names.entries()) {
        const r = await call('POST', gpath, { group_type: name });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.json.group_type_index, i);
      }
      const dup = await call('POST', gpath, { group_type: 'company' });
      assert.equal(dup.status, 400, dup.text);
      const sixth = await call('POST', gpath, { group_type: 'sixth' });
      assert.equal(sixth.status, 400, sixth.text);
      assert.match(sixth.json.detail, /five/);
      const list = await call('GET', gpath);
      assert.deepEqual(list.json.map((g) => g.group_type), names);

      const f = await call('POST', flagsPath(), {
        key: 'per-company', filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'tier', value: 'gold', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] },
      });
      assert.equal(f.status, 201, f.text);
      await within(1000, 'group flag served', async () => (await remote.getFeatureFlag('per-company', 'g-user', {
        groups: { company: 'acme' }, groupProperties: { company: { tier: 'gold' } },
      })) === true);
      assert.equal(await remote.getFeatureFlag('per-company', 'g-user', { groups: { company: 'acme' }, groupProperties: { company: { tier: 'tin' } } }), false);
      const defs = JSON.parse(await redisCommand(redis.port, 'HGET', 'flags:definitions', String(boot.project_id)));
      assert.deepEqual(defs.group_type_mapping, { 0: 'company', 1: 'team', 2: 'workspace', 3: 'region', 4: 'account' });
    });

    test('another project cannot be reached through the flags routes', async () => {
      for (const p of [`/api/projects/${boot.project_id + 100}/feature_flags/`, `/api/environments/${boot.project_id + 100}/feature_flags/`]) {
        assert.equal((await call('GET', p)).status, 404);
        assert.equal((await call('POST', p, { key: 'x', filters: { groups: [] } })).status, 404);
      }
      const twin = await call('GET', `/api/environments/${boot.project_id}/feature_flags/`);
      assert.equal(twin.status, 200);
      assert.ok(twin.json.count >= 1);
    });
  });
}
