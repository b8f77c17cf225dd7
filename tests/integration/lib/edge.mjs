// edge.mjs - the local edge router of `make run` (deploy/nginx/
// edge.conf.template, filled as scripts/run fills it) in front of a test's
// services, so the SDKs reach them through one host as in production.
// nginx binds 127.0.0.1 on a random port (retried if taken) and is killed by
// PID when the test process exits.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './proc.mjs';

const children = new Set();
process.on('exit', () => { for (const c of children) { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } } });

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
          url: `http://127.0.0.1:${port}`,
          async stop() {
            child.kill('SIGKILL');
            await exited;
            fs.rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw new Error('could not start the nginx edge');
}
