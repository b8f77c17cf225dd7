// oauth_flow.test.mjs - the api as an OAuth authorization server and
// protected resource, driven by the real clients (oauth4webapi, then
// openid-client) on both metadata stores: an unauthenticated call's 401
// and resource_metadata, PRM and AS discovery, sign-in and consent, the
// code exchange with PKCE and resource, an endpoint run with the token,
// refresh with rotation (the old refresh token's reuse revokes the family),
// introspection, revocation; the authorization endpoint's refusals; a token
// for another resource; too few scopes; discovery on OAUTH_URL.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { makeCA, startDocServer, startOAuthApi, Visitor, approve } from './lib/oauth.mjs';

const insecure = { [oauth.allowInsecureRequests]: true };
const CALLBACK = 'http://127.0.0.1/callback';
const MCP = 'https://mcp.example.com/mcp';

for (const backend of ['sqlite', 'postgres']) describe(`OAuth flow on ${backend}`, () => {
  let s, docs, tls, as, appUrl, runUrl, user;
  const P = () => `/api/projects/${s.boot.project_id}`;
  const withKey = (method, p, body) => fetch(`${s.base}${p}`, {
    method, headers: { Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });

  // one authorization, start to tokens, with oauth4webapi
  async function authorize({ scope = 'endpoint:read query:read', resource = s.base, access } = {}) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint);
    for (const [k, v] of Object.entries({
      client_id: appUrl, redirect_uri: `http://127.0.0.1:53682/callback`, response_type: 'code', scope,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, resource,
    })) url.searchParams.set(k, v);
    const back = await approve(new Visitor(), url.href, { ...user, access });
    assert.equal(back.status, 303, back.text);
    const c = { client_id: appUrl };
    const params = oauth.validateAuthResponse(as, c, new URL(back.location), state);
    const res = await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, 'http://127.0.0.1:53682/callback', verifier, { additionalParameters: { resource }, ...insecure });
    return oauth.processAuthorizationCodeResponse(as, c, res);
  }
  // the answer, also when it is a challenge (the library throws those)
  const challenged = async (p) => {
    try {
      return await p;
    } catch (e) {
      if (e.response) return e.response;
      throw e;
    }
  };
  const runWith = (token) => challenged(oauth.protectedResourceRequest(token, 'POST', new URL(runUrl), new Headers({ 'Content-Type': 'application/json' }), '{}', insecure));

  before(async () => {
    tls = makeCA(fs.mkdtempSync('/tmp/cm-oauth-ca-'));
    docs = await startDocServer(tls);
    s = await startOAuthApi({ backend, oauthHost: true, env: { OAUTH_CIMD_ALLOW_LOOPBACK: '1', OAUTH_CIMD_CA_FILE: tls.ca, OAUTH_RESOURCES: MCP } });
    user = { email: s.boot.email, password: s.boot.password };
    appUrl = docs.doc('/oauth/client.json', () => ({
      client_id: appUrl, client_name: 'Test App', redirect_uris: [CALLBACK], logo_uri: `${docs.base}/logo.png`,
      'com.posthog.scopes': ['endpoint:read', 'query:read', 'feature_flag:read', 'llm_gateway:read'],
    }));
    const r = await withKey('POST', `${P()}/endpoints/`, { name: 'hello', query: { kind: 'HogQLQuery', query: 'SELECT 1 AS one' } });
    assert.equal(r.status, 201, await r.text());
    runUrl = `${s.base}${P()}/endpoints/hello/run`;
  });

  after(async () => {
    await s?.stop();
    await docs?.stop();
  });

  test('401 with resource_metadata, then PRM and AS discovery', async () => {
    const r = await fetch(runUrl, { method: 'POST' });
    assert.equal(r.status, 401);
    const challenge = r.headers.get('www-authenticate');
    const m = challenge.match(/resource_metadata="([^"]+)"/);
    assert.ok(m, challenge);
    const prm = await oauth.processResourceDiscoveryResponse(new URL(s.base), await fetch(m[1]));
    assert.equal(prm.resource, s.base);
    assert.deepEqual(prm.bearer_methods_supported, ['header']);
    assert.ok(prm.scopes_supported.includes('endpoint:read'));
    assert.ok(!prm.scopes_supported.includes('wizard_session:read')); // hidden from apps
    const issuer = new URL(prm.authorization_servers[0]);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    assert.equal(as.client_id_metadata_document_supported, true);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.ok(as.token_endpoint_auth_methods_supported.includes('none'));
    assert.equal(as.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(as.scopes_supported, prm.scopes_supported);
    // the same documents on OAUTH_URL's host name, with that issuer
    const viaOauthHost = await new Promise((resolve, reject) => {
      const req = http.request(`${s.base}/.well-known/oauth-authorization-server`, { headers: { Host: new URL(s.env.OAUTH_URL).host } }, (res) => {
        let b = '';
        res.on('data', (d) => { b += d; });
        res.on('end', () => resolve(JSON.parse(b)));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(viaOauthHost.issuer, s.env.OAUTH_URL);
    assert.equal(viaOauthHost.token_endpoint, `${s.env.OAUTH_URL}/oauth/token`);
  });

  test('oauth4webapi: code with PKCE, a run, refresh with rotation, reuse revokes the family', async () => {
    const tokens = await authorize();
    assert.match(tokens.access_token, /^pha_[1-9A-HJ-NP-Za-km-z]{44}$/);
    assert.match(tokens.refresh_token, /^phr_/);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'endpoint:read query:read');
    assert.equal(typeof tokens.expires_in, 'number');
    let r = await runWith(tokens.access_token);
    assert.equal(r.status, 200, await r.clone().text());
    assert.deepEqual((await r.json()).results, [[1]]);

    const c = { client_id: appUrl };
    const fresh = await oauth.processRefreshTokenResponse(as, c,
      await oauth.refreshTokenGrantRequest(as, c, oauth.None(), tokens.refresh_token, { additionalParameters: { resource: s.base }, ...insecure }));
    assert.notEqual(fresh.refresh_token, tokens.refresh_token);
    assert.equal((await runWith(fresh.access_token)).status, 200);
    // the first refresh token again: refused, and every token of the grant goes
    await assert.rejects(async () => oauth.processRefreshTokenResponse(as, c,
      await oauth.refreshTokenGrantRequest(as, c, oauth.None(), tokens.refresh_token, insecure)),
    (e) => e instanceof oauth.ResponseBodyError && e.error === 'invalid_grant');
    r = await runWith(fresh.access_token);
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate'), /error="invalid_token"/);
    await assert.rejects(async () => oauth.processRefreshTokenResponse(as, c,
      await oauth.refreshTokenGrantRequest(as, c, oauth.None(), fresh.refresh_token, insecure)),
    (e) => e.error === 'invalid_grant');
  });

  test('introspection with aud, then revocation', async () => {
    const tokens = await authorize({ access: `project:${s.boot.project_id}` });
    const c = { client_id: appUrl };
    let info = await oauth.processIntrospectionResponse(as, c,
      await oauth.introspectionRequest(as, c, oauth.None(), tokens.access_token, insecure));
    assert.equal(info.active, true);
    assert.equal(info.aud, s.base);
    assert.equal(info.client_id, appUrl);
    assert.equal(info.token_type, 'access_token');
    assert.deepEqual(info.scoped_teams, [Number(s.boot.project_id)]);
    // a stranger's client_id learns nothing
    info = await oauth.processIntrospectionResponse(as, { client_id: 'https://other.example.com/c.json' },
      await oauth.introspectionRequest(as, { client_id: 'https://other.example.com/c.json' }, oauth.None(), tokens.access_token, insecure));
    assert.deepEqual(info, { active: false });
    // revoking the refresh token takes the grant's access token with it
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, oauth.None(), tokens.refresh_token, { additionalParameters: { token_type_hint: 'refresh_token' }, ...insecure }));
    info = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, oauth.None(), tokens.access_token, insecure));
    assert.deepEqual(info, { active: false });
    assert.equal((await runWith(tokens.access_token)).status, 401);
    // revoking an unknown token is 200 all the same
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, oauth.None(), 'pha_nothing', insecure));
  });

  test('a code works once: used again, its tokens are revoked', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint);
    for (const [k, v] of Object.entries({ client_id: appUrl, redirect_uri: CALLBACK, response_type: 'code', scope: 'endpoint:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const back = await approve(new Visitor(), url.href, user);
    const code = new URL(back.location).searchParams.get('code');
    const exchange = () => fetch(as.token_endpoint, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: appUrl, redirect_uri: CALLBACK }) });
    let r = await exchange();
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const first = await r.json();
    r = await exchange();
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error, 'invalid_grant');
    assert.equal((await runWith(first.access_token)).status, 401);
    // a wrong verifier, a wrong client, a secret: refused
    r = await fetch(as.token_endpoint, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', code_verifier: verifier, client_id: appUrl, client_secret: 's' }) });
    assert.equal(r.status, 401);
    assert.equal((await r.json()).error, 'invalid_client');
    r = await fetch(as.token_endpoint, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=password&client_id=x' });
    assert.equal((await r.json()).error, 'unsupported_grant_type');
  });

  test('scopes: clamped to the ceiling, privileged dropped, too few for a route is 403', async () => {
    const tokens = await authorize({ scope: 'query:read llm_gateway:read insight:read' });
    assert.equal(tokens.scope, 'query:read'); // insight:read is past the ceiling, llm_gateway an admin's
    const r = await runWith(tokens.access_token);
    assert.equal(r.status, 403);
    assert.match(r.headers.get('www-authenticate'), /error="insufficient_scope", scope="endpoint:read"/);
    assert.equal((await r.json()).code, 'insufficient_scope');
    // a route the token's scope does open
    const ev = await fetch(`${s.base}${P()}/events/`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    assert.notEqual(ev.status, 401);
    assert.notEqual(ev.status, 403);
  });

  test('a token for another resource is refused here', async () => {
    const tokens = await authorize({ resource: MCP });
    const info = await oauth.processIntrospectionResponse(as, { client_id: appUrl },
      await oauth.introspectionRequest(as, { client_id: appUrl }, oauth.None(), tokens.access_token, insecure));
    assert.equal(info.aud, MCP);
    const r = await runWith(tokens.access_token);
    assert.equal(r.status, 401);
    assert.match((await r.json()).detail, /another resource/);
    // an unknown resource is refused at the authorization
    const url = new URL(as.authorization_endpoint);
    for (const [k, v] of Object.entries({ client_id: appUrl, redirect_uri: CALLBACK, response_type: 'code', scope: 'query:read', state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', resource: 'https://evil.example.com/' })) url.searchParams.set(k, v);
    const back = await approve(new Visitor(), url.href, user);
    const q = new URL(back.location).searchParams;
    assert.equal(q.get('error'), 'invalid_target');
    assert.equal(q.get('state'), 'st');
    assert.equal(q.get('iss'), s.base);
  });

  test('the authorization endpoint refuses as RFC 6749 says', async () => {
    const base = { client_id: appUrl, redirect_uri: CALLBACK, response_type: 'code', scope: 'query:read', state: 'xyz',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
    const go = (over, visitor = new Visitor()) => {
      const url = new URL(as.authorization_endpoint);
      for (const [k, v] of Object.entries({ ...base, ...over })) if (v !== undefined) url.searchParams.set(k, v);
      return visitor.go(url.href);
    };
    // not trusted yet: a page, never a redirect
    for (const over of [{ redirect_uri: 'https://evil.example.com/callback' }, { redirect_uri: undefined }, { client_id: undefined }, { client_id: 'https://127.0.0.1:1/none.json' }]) {
      const r = await go(over);
      assert.equal(r.status, 400, JSON.stringify(over));
      assert.equal(r.location, null);
      assert.match(r.headers.get('content-type'), /text\/html/);
      assert.equal(r.headers.get('x-frame-options'), 'DENY');
      assert.equal(r.headers.get('access-control-allow-origin'), null);
    }
    // trusted: back to the client with the error
    for (const [over, error] of [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ scope: 'no_such:read' }, 'invalid_scope'],
      [{ prompt: 'none' }, 'login_required'],
    ]) {
      const r = await go(over);
      assert.equal(r.status, 302, JSON.stringify(over));
      const q = new URL(r.location).searchParams;
      assert.equal(q.get('error'), error, JSON.stringify(over));
      assert.equal(q.get('state'), 'xyz');
      assert.equal(q.get('iss'), s.base);
    }
    // a wrong password, then a denial
    const v = new Visitor();
    let r = await go({}, v);
    assert.match(r.text, /name="password"/);
    r = await v.go(`${s.base}/oauth/authorize`, { method: 'POST', origin: s.base, form: { ...base, action: 'login', email: user.email, password: 'wrong' } });
    assert.equal(r.status, 401);
    assert.match(r.text, /Wrong email or password/);
    const back = await approve(new Visitor(), (() => { const u = new URL(as.authorization_endpoint); for (const [k, val] of Object.entries(base)) u.searchParams.set(k, val); return u.href; })(), { ...user, decision: 'deny' });
    assert.equal(new URL(back.location).searchParams.get('error'), 'access_denied');
    // a form posted from another origin
    r = await v.go(`${s.base}/oauth/authorize`, { method: 'POST', origin: 'https://evil.example.com', form: { ...base, action: 'login', email: user.email, password: user.password } });
    assert.equal(r.status, 403);
  });

  test('openid-client: discovery, code, a run, refresh, introspection, revocation', async () => {
    const config = await client.discovery(new URL(s.base), appUrl, undefined, client.None(), { algorithm: 'oauth2', execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK, scope: 'endpoint:read', state, resource: s.base,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const back = await approve(new Visitor(), url.href, user);
    const tokens = await client.authorizationCodeGrant(config, new URL(back.location), { pkceCodeVerifier: verifier, expectedState: state }, { resource: s.base });
    assert.match(tokens.access_token, /^pha_/);
    let r = await client.fetchProtectedResource(config, tokens.access_token, new URL(runUrl), 'POST', '{}', new Headers({ 'Content-Type': 'application/json' }));
    assert.equal(r.status, 200);
    const again = await client.refreshTokenGrant(config, tokens.refresh_token, { resource: s.base });
    assert.notEqual(again.access_token, tokens.access_token);
    const info = await client.tokenIntrospection(config, again.access_token);
    assert.equal(info.active, true);
    await client.tokenRevocation(config, again.access_token, { token_type_hint: 'access_token' });
    assert.equal((await client.tokenIntrospection(config, again.access_token)).active, false);
    r = await challenged(client.fetchProtectedResource(config, again.access_token, new URL(runUrl), 'POST', '{}', new Headers({ 'Content-Type': 'application/json' })));
    assert.equal(r.status, 401);
  });
});
