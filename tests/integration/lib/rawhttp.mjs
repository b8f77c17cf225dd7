// rawhttp.mjs - a deliberately small HTTP/1.1 client over net.Socket, so
// tests control every byte (pipelining, partial writes, stalls) and see
// every byte back (status line, headers, exact bodies, when the server closes).
import net from 'node:net';

export function connect(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => resolve(new RawConn(s)));
    s.on('error', reject);
  });
}

export class RawConn {
  constructor(socket) {
    this.socket = socket;
    this.buf = Buffer.alloc(0);
    this.closed = false;
    this.waiters = [];
    socket.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.wake(); });
    socket.on('close', () => { this.closed = true; this.wake(); });
    socket.on('error', () => { /* a reset shows up as close */ });
  }
  wake() { const w = this.waiters; this.waiters = []; w.forEach((f) => f()); }
  write(data) { this.socket.write(data); }
  end() { this.socket.end(); }
  destroy() { this.socket.destroy(); }
  // Waits until pred() is true, the socket closes, or timeoutMs passes.
  async until(pred, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (this.closed) return pred();
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise((res) => {
        const t = setTimeout(res, left);
        this.waiters.push(() => { clearTimeout(t); res(); });
      });
    }
    return true;
  }
  // Reads one response (Content-Length framed, as our server always sends).
  async response(timeoutMs = 5000) {
    let parsed = null;
    await this.until(() => (parsed = parseResponse(this.buf)) !== null, timeoutMs);
    if (!parsed) throw new Error(`no complete response (closed=${this.closed}): ${JSON.stringify(this.buf.toString('latin1').slice(0, 200))}`);
    this.buf = this.buf.subarray(parsed.size);
    return parsed;
  }
  async waitClose(timeoutMs = 5000) {
    await this.until(() => this.closed, timeoutMs);
    return this.closed;
  }
}

// Parses one response from the front of buf; null if incomplete.
export function parseResponse(buf, { head = false } = {}) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = lines[0].match(/^HTTP\/1\.[01] (\d{3}) ?(.*)$/);
  if (!m) throw new Error(`bad status line: ${lines[0]}`);
  const headers = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const status = Number(m[1]);
  const len = head || status === 100 || status === 204 || status === 304 ? 0 : Number(headers['content-length'] || 0);
  if (buf.length < end + 4 + len) return null;
  const body = buf.subarray(end + 4, end + 4 + len);
  return { status, reason: m[2], headers, body, text: body.toString('utf8'), size: end + 4 + len,
    json() { return JSON.parse(this.text); } };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Resolves once fn() is truthy (asked every 20 ms); throws after ms.
export async function within(ms, what, fn) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}
