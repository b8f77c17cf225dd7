// procs.mjs - starting the servers a benchmark script needs: a free port on
// 127.0.0.1, a process started and awaited until its output says it is
// ready, and every process started here killed (by PID) when the script exits.
import { spawn } from 'node:child_process';
import net from 'node:net';

const children = [];
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// Starts bin; resolves {child, m} once its stdout/stderr so far matches `ready` (m: the match).
export function start(bin, args, env, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    const t = setTimeout(() => reject(new Error(`${bin} did not start: ${out}`)), 10000);
    const on = (d) => { out += d; const m = out.match(ready); if (m) { clearTimeout(t); resolve({ child, m }); } };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`${bin} exited ${code}: ${out}`)));
  });
}
