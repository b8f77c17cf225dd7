// api_list_cache.test.mjs - the flags list's rendered pages (http/page_cache.h)
// on both metadata stores, with two api processes on one store: every write
// route (create, PATCH, PATCH deleted, DELETE) acknowledged by either process
// shows in the very next list read of both, first page and later pages; an
// unchanged list reads the same bytes again.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const API = path.join(BUILD, 'bin/api');
const groups = (pct) => ({ groups: [{ properties: [], rollout_percentage: pct }] });

for (const backend of ['sqlite', 'postgres']) {
  describe(`flags list pages on ${backend}, two api processes`, () => {
    let redis, pg, a, b, tmp, boot;
    const call = async (server, method, p, body) => {
      const r = await fetch(`http://127.0.0.1:${server.port}${p}`, {
        method,
        headers: { Authorization: `Bearer ${boot.personal_api_key}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, json: text ? JSON.parse(text) : null, text };
    };
    const list = (server, q = '') => call(server, 'GET', `/api/projects/${boot.project_id}/feature_flags/${q}`);
    const one = (id) => `/api/projects/${boot.project_id}/feature_flags/${id}/`;
    const keys = (r) => r.json.results.map((f) => f.key);

    before(async () => {
      redis = await startRedis();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-listcache-'));
      const dbUrl = backend === 'postgres' ? (pg = startPostgres()).database('meta') : `sqlite:${tmp}/meta.db`;
      const env = { API_PORT: '0', REDIS_URL: redis.url, DATABASE_URL: dbUrl, EVENTS_DB: `${tmp}/events.db`, LOG_LEVEL: 'warn', API_READ_CACHE: '200ms' };
      boot = JSON.parse((await run(API, ['bootstrap'], { env: { ...process.env, ...env } })).stdout);
      a = await startServer(API, env, { ready: true });
      b = await startServer(API, env, { ready: true });
    });
    after(async () => {
      const exits = [];
      for (const s of [a, b]) if (s) exits.push([await s.stop(), s]);
      if (pg) pg.stop();
      await redis.stop();
      fs.rmSync(tmp, { recursive: true, force: true });
      for (const [exit, s] of exits) assert.equal(exit.code, 0, s.stderr());
    });

    test('each write route through one api shows in the next read of both', async () => {
      // warm both processes' pages for the empty list and a later page
      for (const s of [a, b]) {
        assert.equal((await list(s)).json.count, 0);
        assert.equal((await list(s, '?limit=1&offset=1')).json.results.length, 0);
      }
      const made = [];
      for (const [i, via] of [[0, a], [1, b], [2, a]]) {
        const r = await call(via, 'POST', `/api/projects/${boot.project_id}/feature_flags/`, { key: `k${i}`, name: `n${i}`, filters: groups(100) });
        assert.equal(r.status, 201, r.text);
        made.push(r.json.id);
        for (const s of [a, b]) {
          const page = await list(s);
          assert.equal(page.json.count, i + 1, `${s === a ? 'a' : 'b'} after create ${i}`);
          assert.equal(keys(page)[0], `k${i}`);
        }
      }
      // a later page follows too: newest first, so offset 1 of limit 1 is k1
      for (const s of [a, b]) assert.deepEqual(keys(await list(s, '?limit=1&offset=1')), ['k1']);

      // PATCH through b, read through a (and b)
      let r = await call(b, 'PATCH', one(made[1]), { name: 'renamed', filters: groups(50) });
      assert.equal(r.status, 200, r.text);
      for (const s of [a, b]) {
        const f = (await list(s)).json.results.find((x) => x.id === made[1]);
        assert.equal(f.name, 'renamed');
        assert.equal(f.filters.groups[0].rollout_percentage, 50);
        assert.equal((await list(s, '?limit=1&offset=1')).json.results[0].name, 'renamed');
      }
      // active off through a
      r = await call(a, 'PATCH', one(made[0]), { active: false });
      assert.equal(r.status, 200, r.text);
      for (const s of [a, b]) assert.equal((await list(s)).json.results.find((x) => x.id === made[0]).active, false);
      // soft delete by PATCH through a, DELETE through b
      r = await call(a, 'PATCH', one(made[2]), { deleted: true });
      assert.equal(r.status, 200, r.text);
      for (const s of [a, b]) assert.deepEqual(keys(await list(s)), ['k1', 'k0']);
      r = await call(b, 'DELETE', one(made[0]));
      assert.equal(r.status, 204, r.text);
      for (const s of [a, b]) {
        const page = await list(s);
        assert.equal(page.json.count, 1);
        assert.deepEqual(keys(page), ['k1']);
        assert.deepEqual(keys(await list(s, '?limit=1&offset=1')), []);
      }
    });

    test('a change acknowledged by one api is never missing from the other\'s next read', async () => {
      const r0 = await call(a, 'POST', `/api/projects/${boot.project_id}/feature_flags/`, { key: 'race', name: 'v0', filters: groups(100) });
      assert.equal(r0.status, 201, r0.text);
      const id = r0.json.id;
      for (let i = 1; i <= 25; i++) {
        const [writer, reader] = i % 2 ? [a, b] : [b, a];
        // reads in flight on the reader while the write lands keep its pages busy
        const inflight = Array.from({ length: 4 }, () => list(reader));
        const w = await call(writer, 'PATCH', one(id), { name: `v${i}` });
        assert.equal(w.status, 200, w.text);
        const after = await list(reader);
        assert.equal(after.json.results.find((x) => x.id === id).name, `v${i}`, `read ${i}`);
        for (const p of await Promise.all(inflight)) assert.equal(p.status, 200);
      }
    });

    test('an unchanged list reads the same bytes; a refused write changes nothing', async () => {
      const first = await list(b);
      const again = await list(b);
      assert.equal(again.text, first.text);
      const bad = await call(a, 'POST', `/api/projects/${boot.project_id}/feature_flags/`, { key: 'race', filters: groups(100) });
      assert.equal(bad.status, 400, bad.text); // the key is taken
      assert.equal((await list(b)).text, first.text);
      // another project's list is its own page
      const other = await call(b, 'GET', `/api/projects/${Number(boot.project_id) + 1000}/feature_flags/`);
      assert.equal(other.status, 404);
    });
    test('a revoked key: refused at once by the api that revoked it; by the other at once on SQLite (the file changed), within API_READ_CACHE on PostgreSQL', async () => {
      const made = await call(a, 'POST', '/api/personal_api_keys/', { label: 'second', scopes: ['*'] });
      assert.equal(made.status, 201, made.text);
      const listWith = (s) => fetch(`http://127.0.0.1:${s.port}/api/projects/${boot.project_id}/feature_flags/`,
        { headers: { Authorization: `Bearer ${made.json.value}` } });
      for (const s of [a, b]) assert.equal((await listWith(s)).status, 200); // both lookups cached
      const gone = await call(a, 'DELETE', `/api/personal_api_keys/${made.json.id}/`);
      assert.equal(gone.status, 204, gone.text);
      assert.equal((await listWith(a)).status, 401);
      if (backend === 'sqlite') assert.equal((await listWith(b)).status, 401);
      else await within(5000, 'the other api refuses the revoked key', async () => (await listWith(b)).status === 401);
      assert.equal((await list(b)).status, 200); // the first key still works
    });
  });
}
