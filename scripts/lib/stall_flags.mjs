// stall_flags.mjs - scripts/bench stall, flags part: requests that cost the
// flags service the most evaluation work, each beside a keep-alive
// /_health probe every 20 ms (stall_probe.mjs):
//   - 10,000 flags with one `exact` person-property filter each, and a
//     request carrying 50,000 person properties (about 830 KB);
//   - 10,000 device-bucketed flags, 50,000 person properties and a
//     50,000-entry flag_keys_to_evaluate;
//   - 100 and 1,000 flags with the regex ^(a+)+$ (catastrophic
//     backtracking) and a subject of 28 "a" and a "b".
// Prints the request's own time and the probe's worst wait, after the same
// probe against the idle service.
//
// Usage: node scripts/lib/stall_flags.mjs BUILD_DIR
// Binds 127.0.0.1 on free ports; stops what it started by PID.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { measureStall, idleBaseline, row, post as postProbe } from './stall_probe.mjs';
import { freePort, start } from './procs.mjs';

const BUILD = path.resolve(process.argv[2] || 'build');

const flag = (i, prop) => ({ id: i + 1, team_id: 1, key: `f${i}`, active: true, deleted: false, version: 1, filters: { groups: [{ properties: [prop(i)], rollout_percentage: 100 }] } });
const cases = [
  {
    name: '10,000 exact flags, 50,000 request properties',
    flags: Array.from({ length: 10000 }, (_, i) => flag(i, (k) => ({ key: `p${k * 5}`, type: 'person', value: `v${k * 5}`, operator: 'exact' }))),
    props: Object.fromEntries(Array.from({ length: 50000 }, (_, i) => [`p${i}`, `v${i}`])),
  },
  {
    name: '10,000 device-bucketed flags, 50,000 flag_keys',
    flags: Array.from({ length: 10000 }, (_, i) => ({ ...flag(i, (k) => ({ key: `p${k}`, type: 'person', value: `v${k}`, operator: 'exact' })), bucketing_identifier: 'device_id' })),
    props: { ...Object.fromEntries(Array.from({ length: 50000 }, (_, i) => [`p${i}`, `v${i}`])), $device_id: 'dev-1' },
    extra: { flag_keys_to_evaluate: Array.from({ length: 50000 }, (_, i) => `f${i}`) },
  },
  ...[100, 1000].map((n) => ({
    name: `${n} flags with ^(a+)+$, subject a{28}b`,
    flags: Array.from({ length: n }, (_, i) => flag(i, () => ({ key: 's', type: 'person', value: '^(a+)+$', operator: 'regex' }))),
    props: { s: `${'a'.repeat(28)}b` },
  })),
];

function post(port, body) {
  return postProbe(port, '/flags?v=2', { 'Content-Type': 'application/json' }, body);
}

const rport = await freePort();
const { child: redis } = await start('redis-server', ['--port', String(rport), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {}, /Ready to accept/);
const R = (...args) => execFileSync('redis-cli', ['-p', String(rport), '-x', ...args.slice(0, -1)], { input: args[args.length - 1] });
execFileSync('redis-cli', ['-p', String(rport), 'HSET', 'projects:tokens', 'phc_stall', '1']);

console.log('== stall: flags POST /flags?v=2 beside a keep-alive /_health probe every 20 ms');
for (const c of cases) {
  R('HSET', 'flags:definitions', '1', JSON.stringify({ flags: c.flags, group_type_mapping: {}, cohorts: {} }));
  const fport = await freePort();
  const { child: flags } = await start(path.join(BUILD, 'bin/flags'), [], { FLAGS_PORT: String(fport), REDIS_URL: `redis://127.0.0.1:${rport}/0`, LOG_LEVEL: 'error', FLAGS_MAX_BODY: '4MiB' }, /listening/);
  for (let i = 0; i < 400; i++) {
    const ok = await new Promise((r) => http.get({ host: '127.0.0.1', port: fport, path: '/_ready' }, (res) => { res.resume(); r(res.statusCode === 200); }).on('error', () => r(false)));
    if (ok) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const body = JSON.stringify({ token: 'phc_stall', distinct_id: 'u1', person_properties: c.props, ...(c.extra || {}) });
  await post(fport, body); // a first request loads the project
  console.log(row(`flags: idle (baseline)`, await idleBaseline(fport, 500)));
  const m = await measureStall(fport, () => post(fport, body));
  const res = m.result.status === 200 ? JSON.parse(m.result.text) : null;
  const enabled = res ? Object.values(res.flags).filter((f) => f.enabled).length : 0;
  console.log(row(`flags: ${c.name}`, m) + (res ? `  [${enabled} enabled, errors ${res.errorsWhileComputingFlags}]` : `  [answered ${m.result.status}]`));
  flags.kill('SIGTERM');
  await new Promise((r) => flags.once('exit', r));
}
redis.kill('SIGKILL');
process.exit(0);
