// proc.mjs - start the project's binaries for a test and stop them by PID.
//
// Every server a test starts binds 127.0.0.1 on a port it picks itself
// (PORT=0) and announces it with one {"listening":PORT} line on stdout, so
// two test runs never collide. Processes are tracked and killed on exit.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// How long a stopped process may take to exit (the sanitizer tree included).
const STOP_BOUND_MS = 60000;

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
// CM_BUILD selects the tree under test: build (default) or build/san.
export const BUILD = path.resolve(ROOT, process.env.CM_BUILD || 'build');

const running = new Set();
function killAll() {
  for (const p of running) {
    try { process.kill(p.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
}
process.on('exit', killAll);

// Starts bin with env; resolves once it printed {"listening":PORT} and,
// with ready, once its /_ready answers 200 (the api listens before its
// metadata store is open and answers 503 not_ready until then).
export async function startServer(bin, env = {}, { timeoutMs = 10000, args = [], ready = false } = {}) {
  const started = Date.now();
  const srv = await listening(bin, env, { timeoutMs, args });
  if (!ready) return srv;
  let last = 'no answer';
  while (Date.now() - started < timeoutMs) {
    try {
      const r = await fetch(`http://127.0.0.1:${srv.port}/_ready`);
      last = `${r.status} ${await r.text()}`;
      if (r.status === 200) return srv;
    } catch (e) {
      last = e.message;
    }
    await new Promise((res) => setTimeout(res, 20));
  }
  await srv.stop('SIGKILL');
  throw new Error(`${bin} not ready in ${timeoutMs} ms (${last}): ${srv.stderr()}`);
}

function listening(bin, env, { timeoutMs, args }) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      env: { ...process.env, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let out = '';
    let err = '';
    const exited = new Promise((res) => child.on('exit', (code, signal) => {
      running.delete(child);
      res({ code, signal });
    }));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${bin} did not start in ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    child.stderr.on('data', (d) => { err += d; if (err.length > 1 << 20) err = err.slice(-65536); });
    // CM_TEST_LOGDIR keeps every process's whole stderr, one file each
    // (a killed writer's log is otherwise gone with it).
    if (process.env.CM_TEST_LOGDIR) {
      const log = fs.createWriteStream(path.join(process.env.CM_TEST_LOGDIR, `${path.basename(bin)}-${child.pid}.log`));
      child.stderr.pipe(log);
    }
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/\{"listening":(\d+)[,}]/);
      if (m && timer) {
        clearTimeout(timer);
        resolve({
          child,
          pid: child.pid,
          port: Number(m[1]),
          exited,
          stderr: () => err,
          // A process that has not exited STOP_BOUND_MS after the signal is
          // killed and the stop fails naming it: a shutdown that hangs fails
          // its test instead of holding the whole suite until CI's limit.
          stop: async (signal = 'SIGTERM') => {
            if (child.exitCode !== null || child.signalCode !== null) return exited;
            child.kill(signal);
            let timer;
            const bound = new Promise((resolve) => { timer = setTimeout(resolve, STOP_BOUND_MS, 'hung'); });
            const first = await Promise.race([exited, bound]);
            clearTimeout(timer);
            if (first !== 'hung') return first;
            child.kill('SIGKILL');
            await exited;
            throw new Error(`${bin} (pid ${child.pid}) did not exit within ${STOP_BOUND_MS / 1000} s of ${signal}; killed. Its stderr ends: ${err.slice(-2000)}`);
          },
        });
      }
    });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited with ${code} before listening: ${err}`));
    });
  });
}
