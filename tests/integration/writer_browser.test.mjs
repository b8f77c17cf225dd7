// writer_browser.test.mjs - posthog-js from its npm bundle in a page that
// headless Chromium (Debian's, driven by playwright-core) loads, pointed at
// the edge: its pageview, a custom event and an identify arrive in the
// event store with the browser's properties, its /flags call answers, its
// remote config (/array/<token>/config.js) loads, and the console shows no
// error.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT } from './lib/proc.mjs';
import { startEdge } from './lib/edge.mjs';
import { PAIRS, pairName, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

const BUNDLE = path.join(ROOT, 'tests/node_modules/posthog-js/dist/array.full.js');

// The app's own server: one page and the posthog-js bundle, on its own
// port (so the edge is another origin, as for a real site).
function startSite(edgeUrl, token) {
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>shop</title>
<link rel="icon" href="data:,"><script src="/posthog.js"></script></head>
<body><h1>Pricing</h1><script>
  posthog.init(${JSON.stringify(token)}, {
    api_host: ${JSON.stringify(edgeUrl)},
    opt_out_useragent_filter: true,  // headless Chromium is a bot to posthog-js otherwise
    person_profiles: 'always',
    loaded: (ph) => {
      ph.capture('plan viewed', { plan: 'pro', from: 'chromium' });
      ph.identify('browser-user', { plan: 'pro', email: 'b@example.com' });
      ph.onFeatureFlags(() => { window.flagsLoaded = true; });
    },
  });
</script></body></html>`;
  const server = http.createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'Content-Type': 'application/javascript' });
      fs.createReadStream(BUNDLE).pipe(res);
    } else if (req.url === '/' || req.url.startsWith('/pricing')) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(page);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

for (const pair of PAIRS) describe(`posthog-js in Chromium (${pairName(pair)})`, () => {
  let s, edge, site, browser;
  const get = async (p) => (await s.get(p)).json;

  before(async () => {
    s = await startPair(pair, { flags: true, ingestEnv: { INGEST_TRUSTED_PROXIES: 'all' } });
    edge = await startEdge({ api: s.api.port, ingest: s.ingest.port, flags: s.flags.port });
    site = await startSite(edge.url, s.boot.project_api_token);
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  });

  after(async () => {
    await browser?.close();
    site?.close();
    await edge?.stop();
    await s?.stop();
  });

  test('pageview, custom event and identify stored with the browser\'s properties; /flags answers; no console error', async () => {
    const page = await browser.newPage();
    const problems = [];
    const answers = {};
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => {
      const u = new URL(r.url());
      if (u.port === String(new URL(edge.url).port)) (answers[u.pathname.replace(/\/[^/]*$/, '/') ] ??= []).push(r.status());
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`);
    });
    const { port } = site.address();
    await page.goto(`http://127.0.0.1:${port}/pricing?utm_source=newsletter`);
    await page.waitForFunction(() => window.flagsLoaded === true, null, { timeout: 10000 });
    await page.evaluate(() => window.posthog.capture('$pageleave'));
    const P = s.boot.project_id;
    await within(15000, 'pageview, custom event and identify stored', async () => {
      const names = (await get(`/api/projects/${P}/events/?limit=100`)).results.map((e) => e.event);
      return ['$pageview', 'plan viewed', '$identify'].every((n) => names.includes(n));
    });
    const events = (await get(`/api/projects/${P}/events/?limit=100`)).results;
    const pv = events.find((e) => e.event === '$pageview');
    assert.equal(pv.properties.$browser, 'Chrome');
    assert.equal(pv.properties.$lib, 'web');
    assert.match(pv.properties.$current_url, /\/pricing\?utm_source=newsletter$/);
    assert.equal(pv.properties.utm_source, 'newsletter');
    assert.equal(pv.properties.$ip, '127.0.0.1');
    const custom = events.find((e) => e.event === 'plan viewed');
    assert.equal(custom.properties.from, 'chromium');
    assert.ok(custom.properties.$session_id);
    const ident = events.find((e) => e.event === '$identify');
    assert.equal(ident.distinct_id, 'browser-user');
    // loaded() runs inside init, before the first pageview: the custom
    // event is the anonymous one, the pageview already the identified one's.
    assert.equal(ident.properties.$anon_distinct_id, custom.distinct_id, 'identify joins the anonymous id');
    assert.equal(pv.distinct_id, 'browser-user');
    let person;
    await within(5000, 'the person is written', async () => (person = (await get(`/api/projects/${P}/persons/?distinct_id=browser-user`)).results[0]) !== undefined);
    assert.deepEqual([...person.distinct_ids].sort(), [custom.distinct_id, 'browser-user'].sort());
    assert.equal(person.properties.email, 'b@example.com');
    assert.equal(person.properties.$initial_utm_source, 'newsletter');
    assert.equal(person.properties.$browser, 'Chrome');
    assert.ok(answers['/flags/']?.every((s) => s === 200), `flags answered: ${JSON.stringify(answers)}`);
    assert.ok(answers[`/array/${s.boot.project_api_token}/`]?.includes(200), `remote config loaded: ${JSON.stringify(answers)}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
