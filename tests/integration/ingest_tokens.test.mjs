// ingest_tokens.test.mjs - ingest learns token changes as the api makes
// them, not at its next REGISTRY_REFRESH (set to a minute here, so nothing
// passes by a timely refresh): a project created over the api takes
// posthog-node's events at once (the SDK does not retry a 401: a refused
// event is lost), and after reset_token the old token is refused at once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PostHog } from 'posthog-node';
import { PAIRS, startPair } from './lib/suite.mjs';
import { within } from './lib/rawhttp.mjs';

// How soon after the api's answer the old token must be refused: the
// api's publish, its notice and ingest's read of the tokens.
const RESET_MS = 200;

describe('ingest learns tokens from the api at once', () => {
  let s;
  const capture = async (token, distinctId = 'probe') => {
    const r = await fetch(`${s.ingestUrl}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch: [{ event: 'probe', distinct_id: distinctId }] }) });
    return { status: r.status, json: await r.json() };
  };
  const newProject = async (name) => {
    const made = await s.call('POST', '/api/projects/', { name, organization: s.boot.organization_id });
    assert.equal(made.status, 201);
    return made.json;
  };

  before(async () => {
    s = await startPair(PAIRS.find((p) => p.queue === 'redis') ?? PAIRS[0], { ingestEnv: { REGISTRY_REFRESH: '60s' } });
    // The registry holds the bootstrap project: unknown tokens are checked.
    assert.equal((await capture(s.boot.project_api_token)).status, 200);
  });

  after(async () => { await s?.stop(); });

  test('a project just created takes every event posthog-node sends at once', async () => {
    const p = await newProject('fresh');
    assert.equal((await capture(p.api_token, 'first')).status, 200, 'the first request, right after the api\'s answer');
    const client = new PostHog(p.api_token, { host: s.ingestUrl, flushAt: 1, flushInterval: 0 });
    const failures = [];
    client.on('error', (e) => failures.push(e));
    for (let i = 0; i < 10; i++) client.capture({ distinctId: 'sdk-user', event: 'sdk-event', properties: { i } });
    await client.shutdown();
    assert.deepEqual(failures, []);
    await within(15000, 'all 11 events of the new project stored', async () => {
      try { return (await s.store.count(`project_id = ${p.id}`)) === 11; } catch { return false; }
    });
  });

  test('an unknown token is still refused, and answered at once when asked again', async () => {
    const r = await capture('phc_never_a_project');
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'unknown_token');
    const again = await capture('phc_never_a_project');
    assert.equal(again.status, 401);
    const m = await (await fetch(`${s.ingestUrl}/metrics`)).text();
    assert.match(m, /ingest_token_rechecks_total\{result="cached_unknown"\} [1-9]/);
  });

  test(`after reset_token the old token is refused within ${RESET_MS} ms, the new one accepted`, async (t) => {
    const p = await newProject('to reset');
    assert.equal((await capture(p.api_token)).status, 200);
    const reset = await s.call('PATCH', `/api/projects/${p.id}/reset_token/`, {});
    const answered = Date.now();
    assert.equal(reset.status, 200);
    const fresh = reset.json.api_token;
    assert.notEqual(fresh, p.api_token);
    let status;
    while ((status = (await capture(p.api_token)).status) === 200 && Date.now() - answered < 5000);
    const took = Date.now() - answered;
    assert.equal(status, 401);
    t.diagnostic(`old token refused ${took} ms after the api's answer`);
    assert.ok(took <= RESET_MS, `the old token was accepted for ${took} ms after the api's answer`);
    assert.equal((await capture(p.api_token)).status, 401, 'and stays refused');
    assert.equal((await capture(fresh)).status, 200);
  });

  test('SIGTERM while unknown tokens wait: they are answered, ingest exits cleanly', async () => {
    const waiting = [1, 2, 3].map((i) => capture(`phc_waiting_${i}_${Date.now()}`));
    await new Promise((r) => setTimeout(r, 50)); // received, waiting for their re-check
    const code = s.ingest.stop('SIGTERM');
    for (const r of await Promise.all(waiting)) assert.equal(r.status, 401);
    assert.equal((await code).code, 0, s.ingest.stderr().slice(-4000));
    assert.doesNotMatch(s.ingest.stderr(), /Sanitizer|runtime error/);
  });
});
