// postgres.mjs - a real PostgreSQL 15 per test file, through
// tests/support/postgres (initdb in a temp dir, 127.0.0.1, a free port),
// stopped by the PID it wrote, also when the test process exits.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './proc.mjs';

const SCRIPT = path.join(ROOT, 'tests', 'support', 'postgres');
const dirs = new Set();
process.on('exit', () => {
  for (const d of dirs) {
    try { execFileSync(SCRIPT, ['stop', d], { stdio: 'ignore' }); } catch { /* best effort */ }
  }
});

export function startPostgres() {
  const dir = path.join(os.tmpdir(), `cm-pg-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  dirs.add(dir);
  const out = execFileSync(SCRIPT, ['start', dir], { encoding: 'utf8' });
  const info = JSON.parse(out.trim().split('\n').pop());
  return {
    ...info,
    dir,
    // A fresh database on this server, as a URL.
    database(name) {
      execFileSync('psql', [info.url, '-qc', `CREATE DATABASE ${name}`], { stdio: 'ignore' });
      return info.url.replace(/\/[^/]*$/, `/${name}`);
    },
    stop() {
      execFileSync(SCRIPT, ['stop', dir], { stdio: 'ignore' });
      dirs.delete(dir);
    },
    // Stops the server (fast shutdown: clients are cut off), keeping its data.
    halt() {
      const pidFile = path.join(dir, 'data', 'postmaster.pid');
      const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT');
      for (let i = 0; i < 200 && fs.existsSync(pidFile); i++) execFileSync('sleep', ['0.05']);
    },
    // Starts a halted server again on the same port and data.
    resume() {
      execFileSync(SCRIPT, ['restart', dir, String(info.port)], { stdio: 'ignore' });
    },
  };
}
