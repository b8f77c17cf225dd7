// oauth_browser.test.mjs - the sign-in and consent pages in a real browser
// (Debian's chromium through playwright-core): sign in, see the client's
// name, logo, redirect host and the unverified notice, approve, and land
// on the client's callback with a code that exchanges for tokens. The
// consent page's screenshot is kept in build/test-artifacts/.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import * as oauth from 'oauth4webapi';
import { BUILD } from './lib/proc.mjs';
import { makeCA, startDocServer, startOAuthApi } from './lib/oauth.mjs';

// A 48x48 PNG of one colour, made here (no image file in the repo).
function png() {
  const crc = (buf) => {
    let c = ~0;
    for (const b of buf) {
      c ^= b;
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
    }
    return ~c >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(48, 0);
  ihdr.writeUInt32BE(48, 4);
  ihdr[8] = 8; // depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.alloc(48 * (1 + 48 * 3));
  for (let y = 0; y < 48; y++) for (let x = 0; x < 48; x++) raw.set([0x1d, 0x4a, 0xff], y * (1 + 144) + 1 + x * 3);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

describe('OAuth consent in a browser', () => {
  let s, docs, browser, callback, appUrl;
  const codes = [];

  before(async () => {
    const tls = makeCA(fs.mkdtempSync('/tmp/cm-oauth-ca-'));
    docs = await startDocServer(tls);
    s = await startOAuthApi({ env: { OAUTH_CIMD_ALLOW_LOOPBACK: '1', OAUTH_CIMD_CA_FILE: tls.ca } });
    const logo = png();
    docs.routes.set('/logo.png', (req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(logo));
    callback = http.createServer((req, res) => {
      const u = new URL(req.url, 'http://127.0.0.1');
      if (u.pathname === '/callback') codes.push(u); // not the favicon
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('back at the client');
    });
    await new Promise((r) => callback.listen(0, '127.0.0.1', r));
    appUrl = docs.doc('/browser/client.json', () => ({
      client_id: appUrl, client_name: 'Browser Reports', logo_uri: `${docs.base}/logo.png`,
      redirect_uris: ['http://127.0.0.1/callback'], 'com.posthog.scopes': ['endpoint:read'],
    }));
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  after(async () => {
    await browser?.close();
    callback?.close();
    await s?.stop();
    await docs?.stop();
  });

  test('sign in, consent (name, logo, unverified notice), approve, exchange', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const redirect = `http://127.0.0.1:${callback.address().port}/callback`;
    const url = new URL(`${s.base}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: appUrl, redirect_uri: redirect, response_type: 'code', scope: 'endpoint:read',
      state: 'st8', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const context = await browser.newContext({ ignoreHTTPSErrors: true }); // the logo's test CA
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url.href);
    assert.equal(await page.textContent('#client-name'), 'Browser Reports');
    await page.fill('#email', s.boot.email);
    await page.fill('#password', s.boot.password);
    await Promise.all([page.waitForNavigation(), page.click('#sign-in')]);
    // the consent page
    assert.equal(await page.textContent('#client-name'), 'Browser Reports');
    assert.ok(await page.isVisible('#unverified'));
    assert.equal(await page.textContent('#redirect-host'), '127.0.0.1');
    assert.equal(await page.textContent('#client-id'), appUrl);
    assert.match(await page.textContent('#scopes'), /endpoint:read/);
    await page.waitForFunction(() => document.querySelector('#logo')?.complete);
    assert.equal(await page.evaluate(() => document.querySelector('#logo').naturalWidth), 48);
    const dir = path.join(BUILD, 'test-artifacts');
    fs.mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, 'oauth-consent.png'), fullPage: true });
    assert.ok(fs.statSync(path.join(dir, 'oauth-consent.png')).size > 1000);
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('#approve')]);
    assert.equal(await page.textContent('body'), 'back at the client');
    assert.deepEqual(errors, []);
    await context.close();
    // the code the browser carried back works
    const back = codes.at(-1);
    assert.equal(back.searchParams.get('state'), 'st8');
    assert.equal(back.searchParams.get('iss'), s.base);
    const res = await fetch(`${s.base}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code'), code_verifier: verifier, client_id: appUrl, redirect_uri: redirect }) });
    assert.equal(res.status, 200);
    assert.match((await res.json()).access_token, /^pha_/);
  });
});
