// api_admin.test.mjs - nobody is locked out (docs/admin.md): `api bootstrap`
// names the store it used and refuses the default one unless DATABASE_URL
// is set or --store-default given; `api admin` on the store of a running
// api, on SQLite and on PostgreSQL: a key made after the first one is lost
// works over HTTP and its revocation makes it 401, a password set from
// stdin signs in (the OAuth sign-in page), a membership gives a user the
// organization's projects, bootstrap-info prints the token capture takes.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, startServer } from './lib/proc.mjs';
import { redisCommand } from './lib/redis.mjs';
import { within } from './lib/rawhttp.mjs';
import { API, makeCA, startDocServer, startOAuthApi, Visitor, approve } from './lib/oauth.mjs';

// The api's command line: {code, stdout, stderr}, whatever the exit status.
function cli(env, args, { input = '', cwd } = {}) {
  return new Promise((resolve) => {
    const child = execFile(API, args, { env, cwd }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }));
    child.stdin.end(input);
  });
}

// process.env without a metadata store: what a bare container or pod has.
function envWithoutStore(extra = {}) {
  const env = { ...process.env, LOG_LEVEL: 'warn', ...extra };
  delete env.DATABASE_URL;
  return env;
}

describe('api bootstrap and the default store', () => {
  let dir;
  before(() => { dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cm-admin-default-'))); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('without DATABASE_URL, bootstrap and admin refuse and create nothing', async () => {
    for (const args of [['bootstrap'], ['admin', 'bootstrap-info'], ['adduser', 'x@example.com']]) {
      for (const env of [envWithoutStore(), envWithoutStore({ DATABASE_URL: '' })]) {
        const r = await cli(env, args, { cwd: dir });
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, /DATABASE_URL is not set/);
        assert.match(r.stderr, /--store-default/);
        assert.equal(r.stdout, '');
      }
    }
    assert.deepEqual(fs.readdirSync(dir), [], 'no store file was made');
  });

  test('--store-default says the default is meant, and the answer names the file', async () => {
    const r = await cli(envWithoutStore(), ['bootstrap', '--store-default'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const boot = JSON.parse(r.stdout);
    assert.equal(boot.created, true);
    assert.equal(boot.store, `sqlite:${dir}/var/meta.db`);
    assert.ok(fs.existsSync(path.join(dir, 'var', 'meta.db')));
    const info = await cli(envWithoutStore(), ['admin', 'bootstrap-info', '--json', '--store-default'], { cwd: dir });
    assert.equal(info.code, 0, info.stderr);
    assert.equal(JSON.parse(info.stdout).project_api_token, boot.project_api_token);
  });

  test('usage errors exit 2 before anything is opened', async () => {
    for (const args of [['admin'], ['admin', 'keys'], ['admin', 'keys', 'list'], ['admin', 'keys', 'list', 'not-an-email'],
      ['admin', 'frobnicate'], ['admin', 'org', 'add-member', 'o', 'a@example.com', 'king'],
      ['admin', 'keys', 'list', 'a@example.com', '--scope', '*'], ['admin', 'password', 'a@example.com', 'secret-in-argv'],
      ['admin', 'keys', 'create', 'a@example.com', '--label']]) {
      const r = await cli(envWithoutStore({ DATABASE_URL: `sqlite:${dir}/other.db` }), args, { cwd: dir });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /usage: api admin/);
    }
    assert.equal(fs.existsSync(path.join(dir, 'other.db')), false);
  });
});

for (const backend of ['sqlite', 'postgres']) describe(`api admin on ${backend}, beside a running api`, () => {
  let s, docs, ingest, appUrl;
  const admin = (args, opts) => cli({ ...process.env, ...s.env }, ['admin', ...args], opts);
  const adminJson = async (args, opts) => {
    const r = await admin([...args, '--json'], opts);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const flagsPath = () => `/api/projects/${s.boot.project_id}/feature_flags/`;
  const get = (key, p) => fetch(`${s.base}${p}`, { headers: { Authorization: `Bearer ${key}` } });

  // The sign-in a user does on the OAuth authorization page: 303 back to
  // the client once the password is right (and the consent given).
  async function signIn(email, password) {
    const verifier = crypto.randomBytes(32).toString('base64url');
    const url = new URL(`${s.base}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: appUrl, redirect_uri: 'http://127.0.0.1:53682/callback', response_type: 'code', scope: 'feature_flag:read',
      code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
      state: 'st', resource: s.base,
    })) url.searchParams.set(k, v);
    return approve(new Visitor(), url.href, { email, password });
  }

  before(async () => {
    const tls = makeCA(fs.mkdtempSync(path.join(os.tmpdir(), 'cm-admin-ca-')));
    docs = await startDocServer(tls);
    // API_READ_CACHE 0: a revoked key is refused at once (no cached lookup)
    s = await startOAuthApi({ backend, env: { API_READ_CACHE: '0', OAUTH_CIMD_ALLOW_LOOPBACK: '1', OAUTH_CIMD_CA_FILE: tls.ca } });
    appUrl = docs.doc('/oauth/client.json', () => ({
      client_id: appUrl, client_name: 'Admin Test', redirect_uris: ['http://127.0.0.1/callback'],
      'com.posthog.scopes': ['feature_flag:read'],
    }));
    ingest = await startServer(path.join(BUILD, 'bin', 'ingest'), { INGEST_PORT: '0', REDIS_URL: s.redis.url, LOG_LEVEL: 'warn' });
    await within(15000, 'the api published the bootstrap token', async () =>
      (await redisCommand(s.redis.port, 'HGET', 'projects:tokens', s.boot.project_api_token)) === String(s.boot.project_id));
  });

  after(async () => {
    await ingest?.stop();
    await s?.stop();
    await docs?.stop();
  });

  test('bootstrap names the store it used, never its password', async () => {
    const shown = backend === 'sqlite' ? `sqlite:${s.tmp}/meta.db` : s.dbUrl;
    assert.equal(s.boot.store, shown);
    if (backend === 'postgres') {
      // trust authentication: the password is sent nowhere, but it is in the URL
      const withPassword = s.dbUrl.replace('postgres://postgres@', 'postgres://postgres:Sekr3t-pw@');
      assert.notEqual(withPassword, s.dbUrl);
      const env = { ...process.env, ...s.env, DATABASE_URL: `${withPassword}?password=Sekr3t-pw` };
      const again = await cli(env, ['bootstrap']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(JSON.parse(again.stdout).created, false);
      assert.equal(JSON.parse(again.stdout).store, s.dbUrl);
      const info = await cli(env, ['admin', 'bootstrap-info']);
      assert.equal(info.code, 0, info.stderr);
      assert.match(info.stderr, new RegExp(`store ${s.dbUrl.replace(/[.]/g, '\\.')}`));
      assert.doesNotMatch(again.stdout + again.stderr + info.stdout + info.stderr, /Sekr3t/);
    }
  });

  test('the first key lost: keys create gives a key the api takes; keys revoke makes it 401', async () => {
    const made = await adminJson(['keys', 'create', s.boot.email, '--label', 'recovery']);
    const key = made.personal_api_key;
    assert.match(key.value, /^phx_/);
    assert.deepEqual(key.scopes, ['*']);
    assert.equal((await get(key.value, flagsPath())).status, 200);

    const listed = await adminJson(['keys', 'list', s.boot.email]);
    const row = listed.results.find((k) => k.id === key.id);
    assert.equal(row.label, 'recovery');
    assert.equal(row.mask_value, key.mask_value);
    assert.ok(!('value' in row), 'a list never shows a key');
    assert.ok(listed.results.some((k) => k.label === 'bootstrap'));

    const revoked = await adminJson(['keys', 'revoke', key.id]);
    assert.equal(revoked.revoked, key.id);
    assert.equal((await get(key.value, flagsPath())).status, 401);
    const twice = await admin(['keys', 'revoke', key.id]);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /no personal API key/);
  });

  test('keys create honours --scope; revoke takes the key itself', async () => {
    const key = (await adminJson(['keys', 'create', s.boot.email, '--scope', 'feature_flag:read'])).personal_api_key;
    assert.deepEqual(key.scopes, ['feature_flag:read']);
    assert.equal((await get(key.value, flagsPath())).status, 200);
    const write = await fetch(`${s.base}${flagsPath()}`, {
      method: 'POST', headers: { Authorization: `Bearer ${key.value}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ key: 'admin-made', filters: { groups: [{ rollout_percentage: 100 }] } }),
    });
    assert.equal(write.status, 403);
    assert.equal((await adminJson(['keys', 'revoke', key.value])).revoked, key.id);
    assert.equal((await get(key.value, flagsPath())).status, 401);
    const bad = await admin(['keys', 'create', s.boot.email, '--scope', 'everything']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not a scope: everything/);
  });

  test('an unknown user is said, with a non-zero exit', async () => {
    for (const args of [['keys', 'list', 'nobody@example.com'], ['keys', 'create', 'nobody@example.com']]) {
      const r = await admin(args);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /no user has the email nobody@example\.com/);
    }
    const pw = await admin(['password', 'nobody@example.com'], { input: 'long enough password\n' });
    assert.equal(pw.code, 1);
  });

  test('password: read from stdin, the sign-in takes the new one and no longer the old', async () => {
    const short = await admin(['password', s.boot.email], { input: 'short\n' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /8 to 128 bytes/);
    assert.equal((await signIn(s.boot.email, s.boot.password)).status, 303, 'the first password, before');

    const fresh = `new ${crypto.randomBytes(8).toString('hex')} password`;
    const r = await admin(['password', s.boot.email], { input: `${fresh}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(fresh));
    const back = await signIn(s.boot.email, fresh);
    assert.equal(back.status, 303, back.text);
    assert.match(back.location, /^http:\/\/127\.0\.0\.1:53682\/callback\?.*code=/);
    assert.notEqual((await signIn(s.boot.email, s.boot.password)).status, 303, 'the old password');
  });

  test('org add-member gives a user the organization\'s projects', async () => {
    const made = await cli({ ...process.env, ...s.env }, ['adduser', 'carol@example.com']);
    assert.equal(made.code, 0, made.stderr);
    const carol = JSON.parse(made.stdout).personal_api_key;
    const before = await get(carol, flagsPath());
    assert.ok(before.status === 403 || before.status === 404, `not yet a member: ${before.status}`);

    const bad = await admin(['org', 'add-member', 'No such organization', 'carol@example.com', 'member']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /no organization has the id or name No such organization/);
    const nobody = await admin(['org', 'add-member', s.boot.organization_id, 'nobody@example.com', 'member']);
    assert.equal(nobody.code, 1);

    const added = await adminJson(['org', 'add-member', 'Demo organization', 'carol@example.com', 'member']);
    assert.equal(added.organization_id, s.boot.organization_id);
    assert.equal(added.level, 1);
    assert.equal(added.previous_role, null);
    assert.equal((await get(carol, flagsPath())).status, 200);
    const orgs = await (await get(carol, '/api/organizations/')).json();
    assert.ok(orgs.results.some((o) => o.id === s.boot.organization_id && o.membership_level === 1), JSON.stringify(orgs));

    const promoted = await adminJson(['org', 'add-member', s.boot.organization_id, 'carol@example.com', 'admin']);
    assert.equal(promoted.previous_role, 'member');
    assert.equal(promoted.level, 8);
  });

  test('bootstrap-info prints the project token again, and capture takes it', async () => {
    const info = await adminJson(['bootstrap-info']);
    assert.equal(info.organization_id, s.boot.organization_id);
    assert.equal(info.project_id, s.boot.project_id);
    assert.equal(info.project_api_token, s.boot.project_api_token);
    assert.equal(info.email, s.boot.email);
    assert.equal(info.personal_api_key, null);
    const text = await admin(['bootstrap-info']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`api admin keys create ${s.boot.email}`));

    const capture = (token) => fetch(`http://127.0.0.1:${ingest.port}/batch/`, {
      method: 'POST', body: JSON.stringify({ api_key: token, batch: [{ event: 'probe', distinct_id: 'admin-test' }] }),
    });
    assert.equal((await capture(info.project_api_token)).status, 200);
    assert.equal((await capture('phc_not_a_project_token')).status, 401);
  });
});
