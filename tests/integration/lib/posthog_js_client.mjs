// posthog_js_client.mjs - runs the real posthog-js (npm) inside jsdom and
// sends events to the host given on the command line. A separate process,
// because posthog-js reads browser globals (window, document, navigator)
// when it loads.
//
//   node posthog_js_client.mjs <api_host> <token> <distinct_id> <n_events>
// Prints {"sent":N} when posthog-js has handed every request to fetch and
// the responses came back.
import { installBrowser } from './browser_env.mjs';

const [host, token, distinctId, nStr] = process.argv.slice(2);
const n = Number(nStr || 3);
const { stats } = installBrowser('http://app.example.test/pricing');

// The package's ESM entry exports the instance as `posthog` (default is a namespace).
const { posthog } = await import('posthog-js');
posthog.init(token, {
  api_host: host,
  autocapture: false,
  capture_pageview: false,
  capture_pageleave: false,
  disable_session_recording: true,
  advanced_disable_flags: true,
  persistence: 'memory',
  bootstrap: { distinctID: 'anon-' + distinctId },
  request_batching: false,
});
posthog.identify(distinctId, { plan: 'pro' });
for (let i = 0; i < n; i++) posthog.capture('js event', { index: i, source: 'posthog-js' });

// Wait until posthog-js has nothing in flight and at least n+1 sends completed.
const deadline = Date.now() + 15000;
while (Date.now() < deadline && (stats.inflight > 0 || stats.completed < n + 1)) {
  await new Promise((r) => setTimeout(r, 50));
}
console.log(JSON.stringify({ sent: stats.completed }));
process.exit(0);
