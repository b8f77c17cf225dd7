// edge.mjs - the local edge router of `make run` (deploy/nginx/
// edge.conf.template, filled as scripts/run fills it) in front of a test's
// services, so the SDKs reach them through one host as in production.
// nginx binds 127.0.0.1 on a random port (retried if taken). It is stopped
// with SIGTERM to its master, which stops its workers before it exits:
// SIGKILL would take the master alone and leave the workers running and
// listening. stop() waits for the master; a test process that exits without
// stop() sends SIGTERM to the master and to its workers (by PID).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './proc.mjs';

const children = new Set();
process.on('exit', () => {
  for (const c of children) {
    for (const pid of [...workerPids(c.pid), c.pid]) { try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ } }
  }
});

// The PIDs of the master's children (its workers), from /proc.
export function workerPids(masterPid) {
  try {
    return fs.readFileSync(`/proc/${masterPid}/task/${masterPid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

// SIGTERM is nginx's fast shutdown: the master stops its workers, then
// exits. SIGKILL only if it has not exited after 10 s (then the workers
// too, by PID, since the master can no longer stop them).
export async function stopMaster(child, exited) {
  const workers = workerPids(child.pid);
  child.kill('SIGTERM');
  let timer;
  const late = new Promise((r) => { timer = setTimeout(() => r(true), 10000); });
  if (await Promise.race([exited.then(() => false), late])) {
    for (const pid of [child.pid, ...workers]) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await exited;
  }
  clearTimeout(timer);
}

function connects(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

// ports: {ingest, flags, api}; a missing service routes to a closed port.
export async function startEdge(ports) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-edge-'));
  for (const d of ['log', 'nginx/body', 'nginx/proxy', 'nginx/fastcgi', 'nginx/uwsgi', 'nginx/scgi']) {
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  }
  const template = fs.readFileSync(path.join(ROOT, 'deploy/nginx/edge.conf.template'), 'utf8');
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = 12000 + Math.floor(Math.random() * 20000);
    const values = { VAR: dir, EDGE_PORT: port, API_PORT: ports.api ?? 9, FLAGS_PORT: ports.flags ?? 9, INGEST_PORT: ports.ingest ?? 9 };
    const conf = template.replace(/@([A-Z_]+)@/g, (m, k) => (k in values ? String(values[k]) : m));
    fs.writeFileSync(path.join(dir, 'nginx/edge.conf'), conf);
    const child = spawn('nginx', ['-e', path.join(dir, 'log/nginx-error.log'), '-c', path.join(dir, 'nginx/edge.conf'), '-p', path.join(dir, 'nginx')],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    const exited = new Promise((r) => child.on('exit', (code) => { children.delete(child); r(code); }));
    let gone = false;
    exited.then(() => { gone = true; });
    for (let i = 0; i < 100 && !gone; i++) {
      if (await connects(port)) {
        return {
          port,
          pid: child.pid,
          url: `http://127.0.0.1:${port}`,
          async stop() {
            await stopMaster(child, exited);
            fs.rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await stopMaster(child, exited);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw new Error('could not start the nginx edge');
}
