// cli_args.test.mjs - every binary answers --help and --version without
// starting (even with a configuration it would refuse), refuses an unknown
// argument with its usage and exit code 2, and the api's commands still reach
// its own dispatch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BUILD, ROOT } from './lib/proc.mjs';

const BINARIES = ['ingest', 'flags', 'api', 'writer'];
// The one place the version is written.
const VERSION = fs.readFileSync(path.join(ROOT, 'Makefile'), 'utf8').match(/^CM_VERSION := (\S+)$/m)[1];

// Runs a binary with a configuration it would refuse to start with (a port
// that is no number): an answer that needed the configuration would fail.
function run(bin, args, env = {}) {
  const prefix = bin.toUpperCase();
  return spawnSync(path.join(BUILD, 'bin', bin), args, {
    env: { ...process.env, [`${prefix}_PORT`]: 'not-a-port', REDIS_URL: 'redis://127.0.0.1:1/0', ...env },
    encoding: 'utf8',
    timeout: 20000,
  });
}

for (const bin of BINARIES) {
  test(`${bin} --help and -h: the usage on stdout, exit 0, nothing started`, () => {
    for (const flag of ['--help', '-h']) {
      const r = run(bin, [flag]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^${bin} ${VERSION.replace(/\./g, '\\.')} - `));
      assert.match(r.stdout, new RegExp(`usage: ${bin} `));
      assert.match(r.stdout, /--print-config/);
      assert.match(r.stdout, /--version/);
      assert.match(r.stdout, /docs\/configuration\.md/);
      assert.doesNotMatch(r.stdout, /"listening"/);
      assert.equal(r.stderr, '', 'no log line: the service did not start');
    }
  });

  test(`${bin} --version: the Makefile's version, exit 0`, () => {
    const r = run(bin, ['--version']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${bin} ${VERSION}\n`);
    assert.equal(r.stderr, '');
  });

  test(`${bin} refuses an unknown argument with its usage, exit 2`, () => {
    const unknown = bin === 'api' ? ['--listen', '-v', '--help=yes'] : ['serve', '--listen', '-v', 'x'];
    for (const arg of unknown) {
      const r = run(bin, [arg]);
      assert.equal(r.status, 2, `${bin} ${arg}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^${bin}: unknown argument '${arg}'\\n`));
      assert.match(r.stderr, new RegExp(`usage: ${bin} `));
      assert.equal(r.stdout, '');
    }
    const extra = run(bin, ['--version', 'now']);
    assert.equal(extra.status, 2);
    assert.match(extra.stderr, /unknown argument 'now'/);
  });

  test(`${bin} --print-config still prints the configuration`, () => {
    const r = run(bin, ['--print-config'], { [`${bin.toUpperCase()}_PORT`]: '0' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${bin.toUpperCase()}_PORT=0 `, 'm'));
  });
}

test('api --help lists its commands; an unknown command still meets the api\'s own dispatch', () => {
  const help = run('api', ['--help']);
  for (const cmd of ['bootstrap', 'adduser EMAIL', 'oauth-verify CLIENT_ID']) assert.ok(help.stdout.includes(cmd), cmd);
  const r = run('api', ['no-such-command'], { API_PORT: '0' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /usage: api \[bootstrap/);
});
