// api_key_widening.test.mjs - a credential never creates a wider one, on
// both metadata stores (docs/api.md, "A credential never creates a wider
// one"). A personal API key makes keys only within its own scopes and
// scoping (a narrow key, a team-scoped key, an organization-scoped key, an
// unscoped full key); an OAuth access token manages no personal keys at all
// and changes neither the email nor the password, whatever its grant, so no
// phx_ key can outlive a revoked grant; email and password change only with
// a key holding all of the user.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as oauth from 'oauth4webapi';
import { makeCA, startDocServer, startOAuthApi, Visitor, approve } from './lib/oauth.mjs';

const insecure = { [oauth.allowInsecureRequests]: true };
const REDIRECT = 'http://127.0.0.1:53682/callback';
const OTHER_ORG = '0199aaaa-0000-7000-8000-00000000abcd';

for (const backend of ['sqlite', 'postgres']) describe(`credentials never widen on ${backend}`, () => {
  let s, docs, as, appUrl, boot, org, p1, p2, strangerProject;
  const call = async (method, p, key, body) => {
    const r = await fetch(`${s.base}${p}`, {
      method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: r.status, json, text };
  };
  const make = async (key, body, status = 201) => {
    const r = await call('POST', '/api/personal_api_keys/', key, { label: 'k', ...body });
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    if (status === 403) {
      assert.equal(r.json.type, 'permission_denied');
      assert.ok(r.json.detail.length > 10, r.text);
    }
    return r.json;
  };
  const keyCount = async () => (await call('GET', '/api/personal_api_keys/', boot.personal_api_key)).json.count;

  async function authorize(scope, access) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint);
    for (const [k, v] of Object.entries({
      client_id: appUrl, redirect_uri: REDIRECT, response_type: 'code', scope,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, resource: s.base,
    })) url.searchParams.set(k, v);
    const back = await approve(new Visitor(), url.href, { email: boot.email, password: boot.password, access });
    assert.equal(back.status, 303, back.text);
    const c = { client_id: appUrl };
    const params = oauth.validateAuthResponse(as, c, new URL(back.location), state);
    const res = await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, REDIRECT, verifier, { additionalParameters: { resource: s.base }, ...insecure });
    return oauth.processAuthorizationCodeResponse(as, c, res);
  }

  before(async () => {
    const tls = makeCA(fs.mkdtempSync('/tmp/cm-widen-ca-'));
    docs = await startDocServer(tls);
    s = await startOAuthApi({ backend, env: { OAUTH_CIMD_ALLOW_LOOPBACK: '1', OAUTH_CIMD_CA_FILE: tls.ca } });
    boot = s.boot;
    org = boot.organization_id;
    p1 = Number(boot.project_id);
    appUrl = docs.doc('/oauth/client.json', () => ({
      client_id: appUrl, client_name: 'Widening App', redirect_uris: ['http://127.0.0.1/callback'],
      'com.posthog.scopes': ['user:read', 'user:write', 'project:read', 'project:write'],
    }));
    const made = await call('POST', '/api/projects/', boot.personal_api_key, { name: 'second' });
    assert.equal(made.status, 201, made.text);
    p2 = made.json.id;
    const stranger = JSON.parse((await s.cli('adduser', 'stranger@example.com')).stdout);
    strangerProject = Number(stranger.project_id);
    const issuer = new URL(s.base);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });
  after(async () => {
    await s?.stop();
    await docs?.stop();
  });

  test('the issue: a user:write key scoped to one project makes no "*" key, and so rotates nothing', async () => {
    const narrow = (await make(boot.personal_api_key, { scopes: ['user:write'], scoped_teams: [p1] })).value;
    const before = await keyCount();
    const r = await make(narrow, { label: 'w', scopes: ['*'] }, 403);
    assert.equal(r.attr, 'scopes');
    assert.match(r.detail, /'\*'/);
    // unscoped even with its own scopes: too wide in its scoping
    const unscoped = await make(narrow, { scopes: ['user:write'] }, 403);
    assert.equal(unscoped.attr, 'scoped_teams');
    assert.equal(await keyCount(), before);
    // the rotation the old "*" key made is out of this key's reach
    const rot = await call('PATCH', `/api/projects/${p1}/rotate_secret_token/`, narrow);
    assert.equal(rot.status, 403, rot.text);
  });

  test('a narrow unscoped key: only scopes it holds (write covers read)', async () => {
    const narrow = (await make(boot.personal_api_key, { scopes: ['user:write', 'feature_flag:read'] })).value;
    for (const scopes of [['*'], ['project:write'], ['project:read'], ['feature_flag:write'], ['user:read', 'cohort:read']]) {
      const r = await make(narrow, { scopes }, 403);
      assert.equal(r.attr, 'scopes');
    }
    const ok = await make(narrow, { scopes: ['user:read', 'user:write', 'feature_flag:read'] });
    assert.deepEqual(ok.scopes, ['user:read', 'user:write', 'feature_flag:read']);
    // an unscoped creator may scope the new key any way
    const scoped = await make(narrow, { scopes: ['user:read'], scoped_teams: [p2] });
    assert.deepEqual(scoped.scoped_teams, [p2]);
  });

  test('a team-scoped key: keys scoped to a non-empty subset of its teams only', async () => {
    const tk = (await make(boot.personal_api_key, { scopes: ['*'], scoped_teams: [p1, p2] })).value;
    assert.deepEqual((await make(tk, { scopes: ['*'], scoped_teams: [p2] })).scoped_teams, [p2]);
    assert.equal((await make(tk, { scopes: ['project:read'], scoped_teams: [p1, p2], scoped_organizations: [org] })).scoped_teams.length, 2);
    for (const body of [{}, { scoped_teams: [] }, { scoped_teams: [p1, strangerProject] }, { scoped_teams: [p1 + 1000] }, { scoped_organizations: [org] }]) {
      const r = await make(tk, { scopes: ['project:read'], ...body }, 403);
      assert.equal(r.attr, 'scoped_teams', JSON.stringify(body));
    }
  });

  test('an organization-scoped key: a subset of its organizations, or teams of them', async () => {
    const ok = (await make(boot.personal_api_key, { scopes: ['user:write', 'project:read'], scoped_organizations: [org] })).value;
    assert.deepEqual((await make(ok, { scopes: ['project:read'], scoped_organizations: [org] })).scoped_organizations, [org]);
    assert.deepEqual((await make(ok, { scopes: ['project:read'], scoped_teams: [p1, p2] })).scoped_teams, [p1, p2]);
    for (const [body, attr] of [
      [{}, 'scoped_organizations'],
      [{ scoped_organizations: [] }, 'scoped_organizations'],
      [{ scoped_organizations: [org, OTHER_ORG] }, 'scoped_organizations'],
      [{ scoped_teams: [strangerProject] }, 'scoped_teams'], // another user's organization
      [{ scoped_teams: [p1 + 1000] }, 'scoped_teams'], // no such project (yet)
      [{ scoped_teams: [] }, 'scoped_organizations'],
    ]) {
      const r = await make(ok, { scopes: ['project:read'], ...body }, 403);
      assert.equal(r.attr, attr, JSON.stringify(body));
    }
    assert.equal((await make(ok, { scopes: ['project:write'], scoped_organizations: [org] }, 403)).attr, 'scopes');
  });

  test('an unscoped full key makes any key, as before', async () => {
    const full = (await make(boot.personal_api_key, { scopes: ['*'] })).value;
    assert.deepEqual((await make(full, { scopes: ['*'] })).scopes, ['*']);
    assert.deepEqual((await make(full, { scopes: ['cohort:read'], scoped_organizations: [OTHER_ORG] })).scoped_organizations, [OTHER_ORG]);
  });

  test("an organization's routes: an organization-scoped key reaches only its own, a project-scoped key none", async () => {
    const body = { feature_flags_quota_limited_until: null };
    const elsewhere = (await make(boot.personal_api_key, { scopes: ['organization:write'], scoped_organizations: [OTHER_ORG] })).value;
    const r = await call('PATCH', `/api/organizations/${org}/`, elsewhere, body);
    assert.equal(r.status, 404, r.text);
    const here = (await make(boot.personal_api_key, { scopes: ['organization:write'], scoped_organizations: [org] })).value;
    const ok = await call('PATCH', `/api/organizations/${org}/`, here, body);
    assert.equal(ok.status, 200, ok.text);
    // a key scoped to projects is for project routes only (PostHog's rule)
    const project = (await make(boot.personal_api_key, { scopes: ['organization:write'], scoped_teams: [p1] })).value;
    for (const [method, p] of [['PATCH', `/api/organizations/${org}/`], ['GET', `/api/organizations/${org}/cimd_verification_tokens/`]]) {
      const r = await call(method, p, project, method === 'PATCH' ? body : undefined);
      assert.equal(r.status, 403, `${method} ${p}: ${r.text}`);
      assert.match(r.json.detail, /scoped to projects are only supported on project routes/);
    }
  });

  test('email and password change only with a key holding all of the user', async () => {
    const patch = (key, body) => call('PATCH', '/api/users/@me/', key, body);
    const scopedStar = (await make(boot.personal_api_key, { scopes: ['*'], scoped_teams: [p1] })).value;
    const orgUser = (await make(boot.personal_api_key, { scopes: ['user:write'], scoped_organizations: [org] })).value;
    const readOnly = (await make(boot.personal_api_key, { scopes: ['user:read', 'project:write'] })).value;
    const userWrite = (await make(boot.personal_api_key, { scopes: ['user:write'] })).value;
    for (const key of [scopedStar, orgUser]) {
      for (const body of [{ email: 'taken-over@example.com' }, { password: 'another-password', current_password: boot.password }]) {
        const r = await patch(key, body);
        assert.equal(r.status, 403, r.text);
        assert.equal(r.json.type, 'permission_denied');
      }
      assert.equal((await patch(key, { first_name: 'Scoped' })).status, 200); // the name is no sign-in
    }
    assert.equal((await patch(readOnly, { email: 'x@example.com' })).status, 403);
    const renamed = await patch(userWrite, { email: 'Renamed@Example.com' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json.email, 'renamed@example.com');
    assert.equal((await patch(boot.personal_api_key, { email: boot.email })).status, 200);
  });

  test('an OAuth token with user:write manages no keys and no sign-in; revoked, it does nothing', async () => {
    const mine = await make(boot.personal_api_key, { scopes: ['cohort:read'] });
    const before = await keyCount();
    for (const access of [`project:${p1}`, 'all']) {
      const tokens = await authorize('user:read user:write project:write', access);
      const t = tokens.access_token;
      assert.match(t, /^pha_/);
      // the grant works where it should
      const me = await call('GET', '/api/users/@me/', t);
      assert.equal(me.status, 200, me.text);
      for (const [m, p, body] of [
        ['POST', '/api/personal_api_keys/', { label: 'w', scopes: ['*'] }],
        ['POST', '/api/personal_api_keys/', { label: 'w', scopes: ['user:read'], scoped_teams: [p1] }],
        ['GET', '/api/personal_api_keys/'],
        ['GET', `/api/personal_api_keys/${mine.id}/`],
        ['DELETE', `/api/personal_api_keys/${mine.id}/`],
        ['PATCH', '/api/users/@me/', { email: 'app@example.com' }],
        ['PATCH', '/api/users/@me/', { password: 'app-chosen-password', current_password: boot.password }],
      ]) {
        const r = await call(m, p, t, body);
        assert.equal(r.status, 403, `${m} ${p} (${access}): ${r.text}`);
        assert.match(r.json.detail, /OAuth access tokens cannot/);
      }
      assert.equal((await call('PATCH', '/api/users/@me/', t, { first_name: 'Via app' })).status, 200);
      // revoked: nothing at all
      const rv = await fetch(`${s.base}/oauth/revoke`, {
        method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: tokens.refresh_token, token_type_hint: 'refresh_token', client_id: appUrl }).toString(),
      });
      assert.equal(rv.status, 200, await rv.text());
      const after = await call('POST', '/api/personal_api_keys/', t, { label: 'w', scopes: ['*'] });
      assert.equal(after.status, 401, after.text);
    }
    // no key was minted, the victim key is still there, the sign-in unchanged
    assert.equal(await keyCount(), before);
    assert.equal((await call('GET', `/api/personal_api_keys/${mine.id}/`, boot.personal_api_key)).status, 200);
    assert.equal((await call('GET', '/api/users/@me/', boot.personal_api_key)).json.email, boot.email);
  });
});
