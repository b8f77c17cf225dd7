// quickstart.test.mjs - docs/quickstart.md, followed as a reader would:
// every ```sh block (and the posthog-node script) is run in the page's
// order against a suite of this test's own (Redis, the api, ingest, flags,
// the writer on SQLite, the nginx edge of `make run`), and what each prints
// is checked. The page is written for `make run`'s addresses; the test
// puts its own in their place (the edge's port for 8000, a free port for
// the document server's 8443) and gives the blocks a working directory
// holding var/bootstrap.json, the bootstrap answer `make run` keeps there.
// The environment the blocks export is carried from one block to the next
// (they run in bash, one process each, as a reader's terminal keeps it).
// Two blocks are not for bash: `oauth-serve` (a server the reader leaves
// running; the test starts it and stops it by PID) and `restart` (the test
// restarts the api with the variables the block sets).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, ROOT, startServer } from './lib/proc.mjs';
import { PAIRS, startPair } from './lib/suite.mjs';
import { startEdge } from './lib/edge.mjs';
import { freePort } from './lib/oauth.mjs';
import { within } from './lib/rawhttp.mjs';

const run = promisify(execFile);
const PAGE = fs.readFileSync(path.join(ROOT, 'docs/quickstart.md'), 'utf8');

// The page's blocks in order: {lang, label, text}. A block with no label is
// not run: the page's only ones are `make run` itself and posthog-js's
// browser snippet, which the test checks as text.
function blocks(page) {
  const out = [];
  for (const m of page.matchAll(/^```([a-z]*)(?: ([\w-]+))?\n([\s\S]*?)^```$/gm)) {
    out.push({ lang: m[1], label: m[2] ?? null, text: m[3] });
  }
  return out;
}

// Consecutive JSON values in text (jq -c prints one per line).
const values = (text) => text.split('\n').filter((l) => l.trim().startsWith('{') || l.trim().startsWith('[')).map((l) => JSON.parse(l));

describe('docs/quickstart.md, followed step by step', () => {
  let s, edge, work, apiPort, apiEnv, docServer, docPort;
  const page = blocks(PAGE);
  const env = { ...process.env };
  const outputs = new Map();

  // The page's addresses made this suite's.
  const localize = (text) => text
    .replaceAll('127.0.0.1:8000', `127.0.0.1:${edge.port}`)
    .replaceAll('127.0.0.1:8443', `127.0.0.1:${docPort}`);

  const startApi = async (extra = {}) => {
    s.api = await startServer(path.join(BUILD, 'bin/api'), { ...apiEnv, ...extra }, { ready: true });
  };

  before(async () => {
    s = await startPair(PAIRS.find((p) => p.queue === 'redis') ?? { queue: 'redis', store: 'sqlite', persons: 'sqlite' }, { flags: true });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-quickstart-'));
    fs.mkdirSync(path.join(work, 'var'));
    fs.writeFileSync(path.join(work, 'var/bootstrap.json'), JSON.stringify(s.boot), { mode: 0o600 });
    docPort = await freePort();
    // The api again on a port of its own, behind the edge, with the edge as
    // its BASE_URL (as `make run`: the OAuth issuer and resource).
    apiPort = await freePort();
    edge = await startEdge({ api: apiPort, ingest: s.ingest.port, flags: s.flags.port });
    await s.api.stop();
    apiEnv = {
      API_PORT: String(apiPort), BASE_URL: `http://127.0.0.1:${edge.port}`, REDIS_URL: s.redis.url,
      DATABASE_URL: `sqlite:${s.tmp}/meta.db`, LOG_LEVEL: 'warn', ...s.store.env,
    };
    await startApi();
  });

  after(async () => {
    if (docServer && docServer.exitCode === null) {
      docServer.kill('SIGTERM');
      await new Promise((r) => docServer.on('exit', r));
    }
    await edge?.stop();
    await s?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  // One block in bash with the environment so far; what it exports is kept.
  const bash = async (text) => {
    const state = path.join(work, '.env');
    const script = `set -euo pipefail\n${text}\nexport -p > ${JSON.stringify(state)}\n`;
    let r;
    try {
      r = await run('bash', ['-c', script], { cwd: work, env, maxBuffer: 1 << 24 });
    } catch (e) {
      throw new Error(`the block failed (${e.code}):\n${text}\nstdout: ${e.stdout}\nstderr: ${e.stderr}`);
    }
    const dump = await run('bash', ['-c', `source ${JSON.stringify(state)}; env -0`], { cwd: work });
    for (const kv of dump.stdout.split('\0').filter(Boolean)) {
      const i = kv.indexOf('=');
      env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return r.stdout;
  };

  // What each block must answer; a block whose answer depends on the writer
  // or the flags service catching up is run again until it does (it only
  // reads), up to a bound generous for the sanitizer tree.
  const checks = {
    setup: (out) => {
      const [p] = values(out);
      assert.equal(p.id, s.boot.project_id);
      assert.equal(p.api_token, s.boot.project_api_token);
      assert.equal(env.TOKEN, s.boot.project_api_token);
      assert.equal(env.KEY, s.boot.personal_api_key);
    },
    'node-capture': (out) => assert.equal(out.trim(), 'sent'),
    capture: (out) => assert.deepEqual(values(out), [{ status: 'Ok' }]),
    events: (out) => {
      const v = values(out);
      const events = v.filter((x) => 'event' in x).map((x) => x.distinct_id).sort();
      assert.deepEqual(events, ['ada', 'grace']);
      // the person's name is its email (PostHog's display name), not the distinct id
      assert.deepEqual(v.filter((x) => 'name' in x), [{ name: 'ada@example.com', distinct_ids: ['ada'] }]);
    },
    'wrong-token': (out) => {
      const [capture, flags] = values(out);
      assert.equal(capture.code, 'unknown_token', out);
      assert.equal(capture.type, 'authentication_error', out);
      assert.equal(flags.code, 'invalid_token', out);
      // the same words on both routes, naming where the right token is
      assert.equal(capture.detail, flags.detail);
      assert.match(capture.detail, /api_token in GET \/api\/projects\//);
    },
    'flag-create': (out) => assert.deepEqual(values(out), [{ key: 'new-onboarding', active: true }]),
    flags: (out) => assert.deepEqual(values(out), [{ enabled: true, reason: 'condition_match' }]),
    variable: (out) => assert.deepEqual(values(out), [{ code_name: 'event_name', type: 'String' }]),
    endpoint: (out) => {
      const [made, ran] = values(out);
      assert.equal(made.name, 'signups');
      assert.equal(made.current_version, 1);
      // ui_url is this deployment's resource for the endpoint, and it answers
      assert.equal(made.ui_url, `http://127.0.0.1:${edge.port}/api/projects/${s.boot.project_id}/endpoints/signups/`);
      assert.doesNotMatch(JSON.stringify(made), /posthog\.com/);
      assert.deepEqual(ran, { columns: ['n'], results: [[2]], is_cached: false });
    },
    openapi: (out) => {
      const lines = out.trim().split('\n');
      assert.match(lines[0], /direct: run the query itself/);
      assert.doesNotMatch(lines[0], /read the materialized table/);
      assert.deepEqual(JSON.parse(lines[1]), { attr: 'refresh', detail: '"sometimes" is not a valid choice: cache, force or direct.' });
    },
    insight: (out) => assert.deepEqual(values(out), [{ name: 'daily-signups' }]),
    'insight-run': (out) => assert.deepEqual(values(out), [{ label: 'signed_up', count: 2, today: 2, days: 8 }]),
    'oauth-ca': (out) => assert.match(out, /srv\.pem: OK/),
    'oauth-doc': () => {
      const doc = JSON.parse(fs.readFileSync(path.join(work, 'oauth-local/client.json'), 'utf8'));
      assert.equal(doc.client_id, `https://127.0.0.1:${docPort}/client.json`);
    },
    'oauth-authorize': (out) => {
      for (const f of ['action', 'client_id', 'code_challenge', 'email', 'password', 'redirect_uri', 'scope', 'state']) {
        assert.match(out, new RegExp(`name="${f}"`), out);
      }
    },
    'oauth-sign-in': (out) => assert.equal(out.trim(), '303'),
    'oauth-consent': (out) => {
      assert.match(env.CODE, /.+/);
      assert.deepEqual(values(out), [{ email: s.boot.email }]);
    },
  };
  const retried = new Set(['events', 'flags', 'insight-run']);

  test('the page names every block it runs, and the SDK settings are the edge', () => {
    const sh = page.filter((b) => b.lang === 'sh');
    assert.ok(sh.length >= 12);
    for (const b of sh) assert.ok(b.label && (checks[b.label] || ['oauth-serve', 'restart'].includes(b.label)), `an unchecked block: ${b.text}`);
    const labels = page.map((b) => b.label).filter(Boolean);
    assert.equal(new Set(labels).size, labels.length, 'labels are unique');
    const browser = page.find((b) => b.lang === 'js' && !b.label);
    assert.match(browser.text, /api_host: 'http:\/\/127\.0\.0\.1:8000'/);
    assert.match(page.find((b) => b.label === 'node-capture').text, /host: 'http:\/\/127\.0\.0\.1:8000'/);
  });

  test('every command, in order', async () => {
    for (const b of page.filter((x) => x.label)) {
      const text = localize(b.text);
      if (b.label === 'node-capture') {
        // beside tests/package.json, so that `posthog-node` resolves
        const file = path.join(ROOT, 'tests', `.quickstart-${process.pid}.mjs`);
        fs.writeFileSync(file, text);
        try {
          const r = await run(process.execPath, [file], { env, cwd: work });
          checks[b.label](r.stdout);
        } finally {
          fs.rmSync(file, { force: true });
        }
        continue;
      }
      if (b.label === 'oauth-serve') {
        const m = text.match(/^cd (\S+) && (openssl .*)$/m);
        assert.ok(m, text);
        docServer = spawn('bash', ['-c', `exec ${m[2]}`], { cwd: path.join(work, m[1]), stdio: ['pipe', 'ignore', 'pipe'] });
        let said = '';
        docServer.stderr.on('data', (d) => { said += d; });
        let why = '';
        await within(10000, 'the document server answers', async () => {
          try {
            await run('curl', ['-sS', '--fail', '--cacert', path.join(work, 'oauth-local/ca.pem'), `https://127.0.0.1:${docPort}/client.json`]);
            return true;
          } catch (e) {
            why = `${e.stderr}; the server said: ${said}`;
            return false;
          }
        }).catch((e) => { throw new Error(`${e.message}: ${why}`); });
        continue;
      }
      if (b.label === 'restart') {
        const m = text.match(/^((?:\w+=\S+ )+)make run$/m);
        assert.ok(m, text);
        const extra = {};
        for (const kv of m[1].trim().split(/\s+/)) {
          const i = kv.indexOf('=');
          extra[kv.slice(0, i)] = kv.slice(i + 1).replace('$PWD', work);
        }
        assert.deepEqual(Object.keys(extra).sort(), ['OAUTH_CIMD_ALLOW_LOOPBACK', 'OAUTH_CIMD_CA_FILE']);
        await s.api.stop();
        await startApi(extra);
        continue;
      }
      let last;
      const attempt = async () => {
        const out = await bash(text);
        outputs.set(b.label, out);
        try {
          checks[b.label](out);
          return true;
        } catch (e) {
          last = e;
          if (!retried.has(b.label)) throw e;
          return false;
        }
      };
      if (retried.has(b.label)) {
        try {
          await within(30000, `block ${b.label}`, attempt);
        } catch (e) {
          throw last ?? e;
        }
      } else {
        await attempt();
      }
    }
  });
});
