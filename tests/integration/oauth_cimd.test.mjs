// oauth_cimd.test.mjs - clients known by their metadata documents (docs/oauth.md,
// Client ID Metadata Documents), served by a local HTTPS server with a test
// CA: every fetch and validation rule as a case, the cache (max-age, never
// an invalid document, one fetch for concurrent asks, a stale copy served
// while it refreshes), an SSRF corpus refused with nothing followed,
// redirect rules, verification per region, verification tokens and the
// provisioning limits they raise.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { makeCA, startDocServer, startOAuthApi, Visitor, formOf } from './lib/oauth.mjs';
import { sleep } from './lib/rawhttp.mjs';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('OAuth client metadata documents', () => {
  let s, docs, tls, visitor, n = 0;
  const fresh = () => `/c${++n}/client.json`;
  const goodDoc = (url, extra = {}) => ({ client_id: url, client_name: 'Doc App', redirect_uris: ['http://127.0.0.1/callback'], ...extra });
  // the authorization page for client_id: its status and text; each from
  // another address (a trusted proxy's X-Forwarded-For), so that the
  // provisioning limits (their own describe below) stay out of the way
  let addr = 0;
  const authorize = (clientId, over = {}) => {
    const u = new URL(`${s.base}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: 'http://127.0.0.1/callback', response_type: 'code',
      scope: 'query:read', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's', ...over })) if (v !== undefined) u.searchParams.set(k, v);
    addr++;
    return visitor.go(u.href, { headers: { 'X-Forwarded-For': `198.51.${(addr >> 8) & 255}.${addr & 255}` } });
  };
  const refused = async (clientId, reason, status = 400) => {
    const r = await authorize(clientId);
    assert.equal(r.status, status, `${clientId}: ${r.text.slice(-300)}`);
    assert.equal(r.location, null);
    if (reason) assert.match(r.text, reason, clientId);
  };
  const sqlite = (sql) => execFileSync('sqlite3', [s.dbUrl.slice('sqlite:'.length), sql]).toString();

  before(async () => {
    tls = makeCA(fs.mkdtempSync('/tmp/cm-oauth-ca-'));
    docs = await startDocServer(tls);
    s = await startOAuthApi({ env: { OAUTH_CIMD_ALLOW_LOOPBACK: '1', OAUTH_CIMD_CA_FILE: tls.ca, API_TRUSTED_PROXIES: '1' } });
    // a signed-in browser: later pages are consent pages
    visitor = new Visitor();
    const url = docs.doc('/signin/client.json', () => goodDoc(`${docs.base}/signin/client.json`));
    const page = await authorize(url);
    const r = await visitor.go(`${s.base}/oauth/authorize`, { method: 'POST', origin: s.base,
      form: { ...formOf(page.text), email: s.boot.email, password: s.boot.password } });
    assert.equal(r.status, 303, r.text);
  });

  after(async () => {
    await s?.stop();
    await docs?.stop();
  });

  test('a valid document: the consent page shows its name, logo, hosts and the unverified notice', async () => {
    const p = fresh();
    const url = docs.doc(p, () => goodDoc(`${docs.base}${p}`, { client_name: 'Acme <Reports>', logo_uri: `${docs.base}/logo.png` }));
    const r = await authorize(url);
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /Acme &lt;Reports&gt;/); // escaped
    assert.match(r.text, new RegExp(`<img id="logo" alt="" src="${docs.base}/logo.png">`));
    assert.match(r.text, /id="unverified"/);
    assert.match(r.text, /<code id="redirect-host">127.0.0.1<\/code>/);
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    assert.equal(docs.hits.get(p), 1);
  });

  test('every validation rule refuses the document, and none is cached', async () => {
    const cases = [
      [(u) => ({ ...goodDoc(u), client_id: `${u}x` }), /not the URL it was fetched from/],
      [(u) => ({ ...goodDoc(u), redirect_uris: [] }), /redirect_uris must be a non-empty array/],
      [(u) => { const d = goodDoc(u); delete d.redirect_uris; return d; }, /redirect_uris/],
      [(u) => ({ ...goodDoc(u), redirect_uris: ['http://app.example.com/cb'] }), /https URL, or http on loopback/],
      [(u) => ({ ...goodDoc(u), redirect_uris: ['https://app.example.com/cb#x'] }), /without a fragment/],
      [(u) => ({ ...goodDoc(u), token_endpoint_auth_method: 'client_secret_basic' }), /only public clients/],
      [(u) => ({ ...goodDoc(u), client_secret: 'shh' }), /client_secret/],
      [(u) => ({ ...goodDoc(u), client_name: '' }), /client_name/],
      [() => '[1, 2]', /not a JSON object/],
      [() => '{"client_id": ', /not a JSON object/],
    ];
    for (const [make, reason] of cases) {
      const p = fresh();
      const url = `${docs.base}${p}`;
      let body = make(url);
      docs.doc(p, () => body);
      await refused(url, reason);
      // fixed, it is fetched again: nothing invalid was kept
      body = goodDoc(url);
      const r = await authorize(url);
      assert.equal(r.status, 200, `${reason}: ${r.text.slice(-200)}`);
      assert.equal(docs.hits.get(p), 2);
    }
    // a logo that is not https is dropped, not fatal
    const p = fresh();
    docs.doc(p, () => goodDoc(`${docs.base}${p}`, { logo_uri: 'http://cdn.example.com/logo.png' }));
    const r = await authorize(`${docs.base}${p}`);
    assert.equal(r.status, 200);
    assert.doesNotMatch(r.text, /id="logo"/);
  });

  test('fetch rules: 200 only, no redirects, 5 KB, 5 s between bytes, 10 s in all', async () => {
    const target = fresh();
    docs.doc(target, () => goodDoc(`${docs.base}${target}`));
    for (const [status, headers] of [[404, {}], [500, {}], [302, { Location: `${docs.base}${target}` }], [301, { Location: `${docs.base}${target}` }], [204, {}]]) {
      const p = fresh();
      docs.routes.set(p, (req, res) => res.writeHead(status, headers).end());
      await refused(`${docs.base}${p}`, new RegExp(`HTTP ${status}`));
    }
    assert.equal(docs.hits.get(target), undefined); // no redirect was followed
    // too large: by Content-Length, and streamed without one
    let p = fresh();
    const big = JSON.stringify({ ...goodDoc(`${docs.base}${p}`), pad: 'x'.repeat(6000) });
    docs.routes.set(p, (req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(big));
    await refused(`${docs.base}${p}`, /larger than 5 KB/);
    p = fresh();
    docs.routes.set(p, (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      for (let i = 0; i < 12; i++) res.write('x'.repeat(1000)); // chunked: no length given
      res.end();
    });
    await refused(`${docs.base}${p}`, /5 KB/);
    // a slow drip past the total deadline
    p = fresh();
    const drips = [];
    docs.routes.set(p, (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const t = setInterval(() => res.write(' '), 500);
      drips.push(t);
      res.on('close', () => clearInterval(t));
    });
    let t0 = Date.now();
    await refused(`${docs.base}${p}`, /no response from 127\.0\.0\.1 within 10000 ms/);
    assert.ok(Date.now() - t0 < 13000, `${Date.now() - t0} ms`);
    drips.forEach(clearInterval);
    // a server that stops answering half way: 5 s without a byte is enough
    p = fresh();
    docs.routes.set(p, (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '400' });
      res.write('{"client_id": ');
    });
    t0 = Date.now();
    await refused(`${docs.base}${p}`, /sent nothing for 5000 ms/);
    assert.ok(Date.now() - t0 >= 4900 && Date.now() - t0 < 8000, `${Date.now() - t0} ms`);
  });

  test('cache: max-age kept (clamped), one fetch for concurrent asks, stale served while it refreshes', async () => {
    let p = fresh();
    docs.doc(p, () => goodDoc(`${docs.base}${p}`), { maxAge: 1 }); // clamped up to 300 s
    await authorize(`${docs.base}${p}`);
    await sleep(1200);
    await authorize(`${docs.base}${p}`);
    assert.equal(docs.hits.get(p), 1);
    // five asks at once for a document that answers slowly: one fetch
    p = fresh();
    const url = `${docs.base}${p}`;
    docs.routes.set(p, (req, res) => setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(goodDoc(url))), 400));
    const all = await Promise.all([1, 2, 3, 4, 5].map(() => authorize(url)));
    assert.deepEqual(all.map((r) => r.status), [200, 200, 200, 200, 200]);
    assert.equal(docs.hits.get(p), 1);
    // stale: served as it was, refreshed behind, the next page has the change
    let name = 'Before';
    docs.doc(p, () => goodDoc(url, { client_name: name }));
    sqlite(`UPDATE oauth_apps SET fresh_until = 0 WHERE client_id = '${url}'`);
    name = 'After';
    let r = await authorize(url);
    assert.match(r.text, /Doc App/); // the stored copy
    await sleep(500);
    assert.equal(docs.hits.get(p), 2);
    r = await authorize(url);
    assert.match(r.text, /After/);
  });

  test('SSRF corpus: refused, nothing fetched or followed', async () => {
    const port = new URL(docs.base).port;
    const corpus = [
      `http://127.0.0.1:${port}/c/client.json`,        // not https
      `https://localhost:${port}/c/client.json`,       // a name for loopback
      `https://vm:${port}/c/client.json`,              // this machine's name: one label
      `https://localhost.localdomain:${port}/c.json`,  // by suffix
      'https://10.0.0.1/client.json',                  // private
      'https://192.168.1.1/client.json',
      'https://172.16.0.1/client.json',
      'https://100.64.0.1/client.json',                // CGNAT
      'https://169.254.169.254/latest/meta-data',      // cloud metadata
      'https://metadata.google.internal/computeMetadata',
      'https://0.0.0.0/client.json',
      'https://[::ffff:127.0.0.1]/client.json',        // IPv4-mapped loopback
      'https://[::ffff:10.0.0.1]/client.json',         // IPv4-mapped private
      'https://[fe80::1]/client.json',                 // link-local
      'https://[fd00::1]/client.json',                 // unique local
      `https://2130706433:${port}/client.json`,        // 127.0.0.1 in decimal
      `https://0177.0.0.1:${port}/client.json`,        // octal
      `https://0x7f.0.0.1:${port}/client.json`,        // hex
      `https://127.1:${port}/client.json`,             // short form
      `https://127.0.0.1:${port}/a/../client.json`,    // dot segments
      `https://127.0.0.1:${port}/%2e%2e/client.json`,
      `https://127.0.0.1:${port}/client.json?x=1`,     // query
      `https://user@127.0.0.1:${port}/client.json`,    // userinfo
      `https://127.0.0.1:${port}\\@evil.example.com/x`, // backslash
    ];
    const before = [...docs.hits.values()].reduce((a, b) => a + b, 0);
    for (const id of corpus) await refused(id, null);
    assert.equal([...docs.hits.values()].reduce((a, b) => a + b, 0), before);
  });

  test('redirect rules at the authorization endpoint', async () => {
    const p = fresh();
    const url = docs.doc(p, () => goodDoc(`${docs.base}${p}`, { redirect_uris: ['http://localhost/callback', 'http://localhost:8080/cb', 'https://app.example.org/oauth/done'] }));
    const ok = async (redirect) => assert.equal((await authorize(url, { redirect_uri: redirect })).status, 200, redirect);
    const no = async (redirect) => assert.equal((await authorize(url, { redirect_uri: redirect })).status, 400, redirect);
    await ok('http://localhost:53682/callback');
    await ok('http://localhost:8080/cb');
    await no('http://localhost:9090/cb');
    await no('http://127.0.0.1:5000/callback');
    await ok('https://app.example.org/oauth/done');
    await no('https://app.example.org/oauth/done/');
    await no('https://app.example.org:444/oauth/done');
  });

  test('verification per region: the notice follows the operator', async () => {
    const p = fresh();
    const url = docs.doc(p, () => goodDoc(`${docs.base}${p}`));
    assert.match((await authorize(url)).text, /id="unverified"/);
    // verified in another region: still unverified here
    await s.cliEnv({ REGION: 'eu' }, 'oauth-verify', url);
    assert.match((await authorize(url)).text, /id="unverified"/);
    const out = JSON.parse((await s.cli('oauth-verify', url)).stdout);
    assert.deepEqual(out, { client_id: url, region: 'self-hosted', verified: true });
    assert.doesNotMatch((await authorize(url)).text, /id="unverified"/);
    await s.cli('oauth-unverify', url);
    assert.match((await authorize(url)).text, /id="unverified"/);
    await assert.rejects(s.cli('oauth-verify', 'not-a-url'));
  });
});

describe('OAuth provisioning limits and verification tokens', () => {
  let s, docs, tls;
  const doc = (p, extra = {}) => docs.doc(p, () => ({ client_id: `${docs.base}${p}`, client_name: 'Limited', redirect_uris: ['http://127.0.0.1/callback'], ...extra }));
  const authorize = (clientId) => {
    const u = new URL(`${s.base}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: 'http://127.0.0.1/callback', response_type: 'code',
      scope: 'query:read', code_challenge: CHALLENGE, code_challenge_method: 'S256' })) u.searchParams.set(k, v);
    return fetch(u, { redirect: 'manual' });
  };

  before(async () => {
    tls = makeCA(fs.mkdtempSync('/tmp/cm-oauth-ca-'));
    docs = await startDocServer(tls);
    s = await startOAuthApi({ env: { OAUTH_CIMD_ALLOW_LOOPBACK: '1', OAUTH_CIMD_CA_FILE: tls.ca } });
  });

  after(async () => {
    await s?.stop();
    await docs?.stop();
  });

  test('five new apps a minute from one address; a linked app still gets through', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await authorize(doc(`/free${i}.json`))).status, 200);
    const r = await authorize(doc('/free5.json'));
    assert.equal(r.status, 429);
    assert.match(await r.text(), /too many new applications/);
    // an app already known is not a new one
    assert.equal((await authorize(`${docs.base}/free0.json`)).status, 200);
    // a verification token of the organization, bound to this document's URL
    const key = { Authorization: `Bearer ${s.boot.personal_api_key}`, 'Content-Type': 'application/json' };
    const V = `${s.base}/api/organizations/${s.boot.organization_id}/cimd_verification_tokens/`;
    let t = await fetch(V, { method: 'POST', headers: key, body: JSON.stringify({ cimd_url: `${docs.base.toUpperCase().replace('HTTPS', 'https')}/linked.json/` }) });
    assert.equal(t.status, 201, await t.clone().text());
    const made = await t.json();
    assert.match(made.token, /^phvt_/);
    assert.equal(made.cimd_url, `${docs.base}/linked.json`); // normalised
    const listed = await (await fetch(V, { headers: key })).json();
    assert.equal(listed.results.length, 1);
    assert.equal(listed.results[0].token, undefined); // shown once
    assert.equal((await authorize(doc('/linked.json', { 'com.posthog.verification_token': made.token }))).status, 200);
    // the same token in another document links nothing: refused as unlinked
    assert.equal((await authorize(doc('/copycat.json', { 'com.posthog.verification_token': made.token }))).status, 429);
    t = await fetch(V, { method: 'POST', headers: key, body: JSON.stringify({ cimd_url: 'http://insecure.example.com/c.json' }) });
    assert.equal(t.status, 400);
    t = await fetch(`${V}${made.id}/`, { method: 'DELETE', headers: key });
    assert.equal(t.status, 204);
  });
});
