// posthog_js_flags.mjs - the real posthog-js (npm) in jsdom asking a flags
// service for flags, as a browser would. A separate process because
// posthog-js reads browser globals when it loads.
//
//   node posthog_js_flags.mjs <api_host> <token> <distinct_id> <flag>...
// Prints {"enabled": {flag: bool}, "variant": {flag: value}} once flags loaded.
import { installBrowser } from './browser_env.mjs';

const [host, token, distinctId, ...keys] = process.argv.slice(2);
// resources: 'usable' lets posthog-js's remote-config <script> load (and fail
// with a 404 here), after which it falls back and asks /flags.
installBrowser('http://app.example.test/', { resources: 'usable', runScripts: 'dangerously' });
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
