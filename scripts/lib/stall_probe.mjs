// stall_probe.mjs - how long one request holds a service's event loop,
// seen from another client: a keep-alive GET /_health every 20 ms on its
// own connection while the request runs. For scripts/bench stall.
//
// measureStall(port, send) runs the probe, awaits send() (the heavy
// request), stops the probe, and returns
//   { requestMs, worstProbeMs, probes }
// where worstProbeMs is the longest wait of any probe for its answer. A
// probe is only sent once the previous one is answered, so a stall shows
// as one long wait, not as a pile of them.
import http from 'node:http';

export function probeOnce(agent, port) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.get({ host: '127.0.0.1', port, path: '/_health', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    });
    req.on('error', reject);
  });
}

export async function measureStall(port, send, { intervalMs = 20 } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await probeOnce(agent, port); // the connection is open before the request starts
  let running = true;
  let worst = 0;
  let probes = 0;
  const loop = (async () => {
    while (running) {
      const ms = await probeOnce(agent, port);
      probes++;
      if (ms > worst) worst = ms;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  const t0 = process.hrtime.bigint();
  const result = await send();
  const requestMs = Number(process.hrtime.bigint() - t0) / 1e6;
  // One more probe after the answer: work the service does after
  // responding (freeing a big batch) counts too.
  await new Promise((r) => setTimeout(r, 3 * intervalMs));
  running = false;
  await loop;
  agent.destroy();
  return { requestMs, worstProbeMs: worst, probes, result };
}

// The same probe against the idle service: the figure a stall compares to.
export async function idleBaseline(port, ms = 1000) {
  return measureStall(port, () => new Promise((r) => setTimeout(r, ms)));
}

export function row(name, m) {
  return `${name.padEnd(52)} ${m.requestMs.toFixed(0).padStart(8)} ms  worst probe ${m.worstProbeMs.toFixed(1).padStart(7)} ms  (${m.probes} probes)`;
}

// The big request itself: POST body to path, resolved with its status and
// text once it has been answered in full.
export function post(port, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
