// posthog_js_flags.mjs - the real posthog-js (npm) in jsdom asking a flags
// service for flags, as a browser would. A separate process because
// posthog-js reads browser globals when it loads.
//
//   node posthog_js_flags.mjs <api_host> <token> <distinct_id> <flag>...
// Prints {"enabled": {flag: bool}, "variant": {flag: value}} once flags loaded.
import { JSDOM } from 'jsdom';

const [host, token, distinctId, ...keys] = process.argv.slice(2);
// resources: 'usable' lets posthog-js's remote-config <script> load (and fail
// with a 404 here), after which it falls back and asks /flags.
const dom = new JSDOM('<!doctype html><html><body></body></html>', { url: 'http://app.example.test/', resources: 'usable', runScripts: 'dangerously', pretendToBeVisual: true });
const w = dom.window;
const nodeFetch = globalThis.fetch;
w.fetch = (...args) => nodeFetch(...args);
for (const k of ['window', 'document', 'navigator', 'location', 'localStorage', 'sessionStorage', 'XMLHttpRequest']) {
  try { globalThis[k] = k === 'window' ? w : w[k]; } catch { /* read-only */ }
}
globalThis.fetch = w.fetch;
const { posthog } = await import('posthog-js');
const timer = setTimeout(() => { console.log(JSON.stringify({ error: 'flags never loaded' })); process.exit(1); }, 15000);
posthog.init(token, {
  api_host: host,
  autocapture: false,
  capture_pageview: false,
  disable_session_recording: true,
  persistence: 'memory',
  bootstrap: { distinctID: distinctId },
  loaded: (ph) => {
    ph.onFeatureFlags(() => {
      clearTimeout(timer);
      const enabled = {};
      const variant = {};
      for (const k of keys) {
        enabled[k] = ph.isFeatureEnabled(k);
        variant[k] = ph.getFeatureFlag(k);
      }
      console.log(JSON.stringify({ enabled, variant }));
      process.exit(0);
    });
  },
});
