// browser_env.mjs - a jsdom window installed as the process's browser
// globals, for running the real posthog-js in Node. posthog-js reads
// window, document and navigator when it loads, so call this before
// importing it; its requests go through Node's real fetch.
import { JSDOM } from 'jsdom';

export function installBrowser(url, jsdomOptions = {}) {
  const dom = new JSDOM('<!doctype html><html><head></head><body><p>page</p></body></html>', {
    url, pretendToBeVisual: true, ...jsdomOptions,
  });
  const w = dom.window;
  const nodeFetch = globalThis.fetch;
  const stats = { inflight: 0, completed: 0 };
  w.fetch = async (...args) => {
    stats.inflight++;
    try {
      return await nodeFetch(...args);
    } finally {
      stats.inflight--;
      stats.completed++;
    }
  };
  for (const k of ['window', 'document', 'navigator', 'location', 'localStorage', 'sessionStorage', 'XMLHttpRequest']) {
    try { globalThis[k] = k === 'window' ? w : w[k]; } catch { /* read-only in this Node */ }
  }
  globalThis.fetch = w.fetch;
  return { window: w, stats };
}
