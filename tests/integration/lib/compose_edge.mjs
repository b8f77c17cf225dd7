// compose_edge.mjs - the compose stacks' nginx edge (deploy/compose/edge.conf
// or edge-http.conf with edge-routes.conf) run on this machine: the files
// copied to a temporary directory with only what ties them to a container
// replaced, each replacement checked to have matched - the listen ports
// (127.0.0.1 and free ports instead of 443 and 80), the mounted paths
// (/etc/nginx/...), the services' names (the test's upstreams on 127.0.0.1,
// literal addresses, so the resolver is never asked) - and temporary
// directories and a pid file added. checkConfig() runs `nginx -t` on such a
// copy; startComposeEdge() runs it and stops it by its master's PID.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './proc.mjs';
import { stopMaster, workerPids } from './edge.mjs';

const COMPOSE = path.join(ROOT, 'deploy/compose');
const children = new Set();
process.on('exit', () => {
  for (const c of children) {
    for (const pid of [...workerPids(c.pid), c.pid]) { try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ } }
  }
});

function substitute(text, from, to, what) { // every occurrence; at least one
  const n = text.split(from).length - 1;
  if (n < 1) throw new Error(`${what}: "${from}" not found`);
  return text.split(from).join(to);
}

// A throwaway certificate for localhost and 127.0.0.1, made by openssl.
export function makeCertificate(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', path.join(dir, 'tls.key'), '-out', path.join(dir, 'tls.crt'), '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
  return fs.readFileSync(path.join(dir, 'tls.crt'));
}

// Writes the runnable copy into dir; returns the config file's path.
// conf: 'edge.conf' or 'edge-http.conf'; ports: {tls, plain, ingest, flags, api}.
export function localCopy(dir, conf, ports) {
  for (const d of ['log', 'body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  let routes = fs.readFileSync(path.join(COMPOSE, 'edge-routes.conf'), 'utf8');
  for (const [svc, port] of [['ingest', 8002], ['flags', 8003], ['api', 8001]]) {
    routes = substitute(routes, `http://${svc}:${port};`, `http://127.0.0.1:${ports[svc] ?? 9};`, 'edge-routes.conf');
  }
  fs.writeFileSync(path.join(dir, 'edge-routes.conf'), routes);
  let text = fs.readFileSync(path.join(COMPOSE, conf), 'utf8');
  text = substitute(text, '/etc/nginx/edge-routes.conf', path.join(dir, 'edge-routes.conf'), conf);
  if (conf === 'edge.conf') {
    text = substitute(text, '/etc/nginx/certs/', `${path.join(dir, 'certs')}/`, conf);
    text = substitute(text, 'listen 443 ssl;', `listen 127.0.0.1:${ports.tls} ssl;`, conf);
  }
  text = substitute(text, 'listen 80;', `listen 127.0.0.1:${ports.plain};`, conf);
  text = substitute(text, 'worker_processes auto;', `worker_processes 1;\npid ${path.join(dir, 'nginx.pid')};`, conf);
  text = substitute(text, 'http {', ['http {', ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((d) =>
    `    ${d === 'body' ? 'client_body' : d}_temp_path ${path.join(dir, d)};`)].join('\n'), conf);
  const file = path.join(dir, conf);
  fs.writeFileSync(file, text);
  return file;
}

// `nginx -t` on a runnable copy: {status, output}.
export function checkConfig(dir, conf, ports) {
  const file = localCopy(dir, conf, ports);
  const r = spawnSync('nginx', ['-t', '-e', path.join(dir, 'log/error.log'), '-c', file, '-p', dir], { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function listening(port) {
  return new Promise((resolve) => {
    import('node:net').then(({ default: net }) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
  });
}

// Runs the copy on free ports (retried if taken); {tls, plain, stop()}.
// certDir: where makeCertificate() put tls.crt and tls.key (edge.conf only).
export async function startComposeEdge(conf, upstreams, certDir) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-compose-edge-'));
  if (certDir) fs.cpSync(certDir, path.join(dir, 'certs'), { recursive: true });
  for (let attempt = 0; attempt < 20; attempt++) {
    const ports = { ...upstreams, tls: 12000 + Math.floor(Math.random() * 20000), plain: 12000 + Math.floor(Math.random() * 20000) };
    if (ports.tls === ports.plain) continue;
    const file = localCopy(dir, conf, ports);
    const child = spawn('nginx', ['-e', path.join(dir, 'log/error.log'), '-c', file, '-p', dir, '-g', 'daemon off;'],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    const exited = new Promise((r) => child.on('exit', (code) => { children.delete(child); r(code); }));
    let gone = false;
    exited.then(() => { gone = true; });
    const want = conf === 'edge.conf' ? [ports.tls, ports.plain] : [ports.plain];
    for (let i = 0; i < 100 && !gone; i++) {
      if ((await Promise.all(want.map(listening))).every(Boolean)) {
        return {
          ...ports,
          pid: child.pid,
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
  throw new Error('could not start the compose edge');
}
