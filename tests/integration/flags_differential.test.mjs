// flags_differential.test.mjs - the flags service against posthog-node's own
// local evaluation, on ~1,000 random flags and 200 random persons.
//
// A real redis-server holds the project, the definitions envelope, persons
// and groups (proto/redis-keys.md). posthog-node polls the envelope from the
// service (GET /flags/definitions, secret token as Bearer), then evaluates
// every flag for every person LOCALLY ONLY; the service answers
// POST /flags?v=2 for the same person once with all flags. Wherever the SDK
// reaches a value, enabled / variant / payload must be identical
// (docs/flags.md, rule 1). The SDK is given exactly what the service sees:
// stored properties with the request's properties merged over them.
//
// Runtime filtering is never requested (no evaluation_runtime, and the
// generator writes no client/server-only flags), GeoIP is disabled, and
// early access is not generated: those follow PostHog's server on purpose.

// Dates without an offset are local time for the SDK; the service reads UTC.
process.env.TZ = 'UTC';

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PostHog } from 'posthog-node';
import { BUILD, ROOT, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import Ajv from 'ajv';
import { generateScenario, mergedView, storeRecords } from './lib/flaggen.mjs';

const FLAGS_BIN = path.join(BUILD, 'bin/flags');
const CONCURRENCY = 4;
const SHOW_MISMATCHES = 5;
const PER_FLAG_SAMPLE = 25; // every 25th person is also evaluated flag by flag

// Two projects: the legacy exact matching (the bulk) and
// property_matching_version 2 (explicit exact matching).
// FLAGS_DIFF_SEED / FLAGS_DIFF_FLAGS / FLAGS_DIFF_PERSONS explore other
// scenarios (the second project derives its seed from the first).
const SEED = Number(process.env.FLAGS_DIFF_SEED || 0x5eed1);
const NFLAGS = Number(process.env.FLAGS_DIFF_FLAGS || 1000);
const NPERSONS = Number(process.env.FLAGS_DIFF_PERSONS || 200);
const PROJECTS = [
  { projectId: 11, token: 'phc_differential_legacy', secret: 'phs_differential_legacy_secret',
    gen: { seed: SEED, flags: NFLAGS, persons: NPERSONS } },
  { projectId: 12, token: 'phc_differential_pmv2', secret: 'phs_differential_pmv2_secret',
    gen: { seed: (SEED ^ 0xc0ffee) >>> 0, flags: Math.ceil(NFLAGS * 0.3), persons: Math.ceil(NPERSONS * 0.3), propertyMatchingVersion: 2, keyPrefix: 'pmv2' } },
];

const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');

async function pool(items, n, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

// The SDK's payload reading (@posthog/core resolveFeatureFlagPayload +
// getAllFlagsAndPayloads): a JSON string is parsed, a falsy one is no payload.
function sdkReadingOfPayload(p) {
  if (p === null || p === undefined || p === '') return undefined;
  let v = p;
  if (typeof p === 'string') {
    try { v = JSON.parse(p); } catch { v = p; }
  }
  return v ? v : undefined;
}

const schemaAjv = new Ajv({ strict: false, allErrors: true });
const validateEnvelope = schemaAjv.compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'proto/flag.schema.json'))));

async function storeScenario(port, project, sc) {
  const { projectId, token, secret } = project;
  assert.ok(validateEnvelope(sc.envelope), `generated definitions follow proto/flag.schema.json: ${schemaAjv.errorsText(validateEnvelope.errors)}`);
  await redisCommand(port, 'HSET', 'projects:tokens', token, String(projectId));
  await redisCommand(port, 'HSET', 'projects:secret_tokens', sha256(secret), String(projectId));
  await redisCommand(port, 'HSET', 'flags:definitions', String(projectId), JSON.stringify(sc.envelope));
  await storeRecords(port, projectId, sc);
}

describe('flags service vs posthog-node local evaluation (differential)', () => {
  let redis;
  let flags;
  let base;
  const clients = [];

  before(async () => {
    assert.equal(new Date(2024, 0, 1).getTimezoneOffset(), 0, 'the test must run with TZ=UTC');
    redis = await startRedis();
    for (const project of PROJECTS) {
      project.scenario = generateScenario({ ...project.gen, projectId: project.projectId });
      await storeScenario(redis.port, project, project.scenario);
    }
    flags = await startServer(FLAGS_BIN, { FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn', TZ: 'UTC' }, { timeoutMs: 20000 });
    base = `http://127.0.0.1:${flags.port}`;
  });

  after(async () => {
    for (const c of clients) await c.shutdown(2000);
    if (flags) {
      const { code, signal } = await flags.stop();
      assert.equal(code, 0, `flags exit ${code}/${signal}: ${flags.stderr()}`);
    }
    if (redis) await redis.stop();
  });

  for (const project of PROJECTS) {
    const label = project.gen.propertyMatchingVersion ? `property_matching_version ${project.gen.propertyMatchingVersion}` : 'legacy matching';
    test(`every (flag, person) the SDK decides agrees with POST /flags?v=2 (${label}, ${project.gen.flags} flags x ${project.gen.persons} persons)`, async () => {
      const sc = project.scenario;
      const errors = [];
      const client = new PostHog(project.token, {
        host: base,
        personalApiKey: project.secret,
        featureFlagsPollingInterval: 10 * 60 * 1000,
        flushAt: 100000,
        requestTimeout: 20000,
      });
      clients.push(client);
      client.on('error', (e) => errors.push(e));
      // The SDK warns (console.warn) about every flag it can never resolve
      // locally; the generator makes those on purpose.
      const warn = console.warn;
      console.warn = (...a) => { if (!String(a[0]).startsWith('[PostHog] You are using local evaluation')) warn(...a); };
      try {
        await client.reloadFeatureFlags();
      } finally {
        console.warn = warn;
      }
      assert.ok(client.isLocalEvaluationReady(), `local evaluation not ready: ${errors.map(String).join('; ')}`);
      // The SDK holds exactly the stored envelope.
      const poller = client.featureFlagsPoller;
      assert.equal(poller.featureFlags.length, sc.envelope.flags.length);
      assert.deepEqual(poller.featureFlags, sc.envelope.flags);
      assert.deepEqual(poller.cohorts, JSON.parse(JSON.stringify(sc.envelope.cohorts)));

      const byKey = new Map(sc.envelope.flags.map((f) => [f.key, f]));
      let compared = 0;
      let agreed = 0;
      let skipped = 0;
      let serviceErrors = 0;
      const stats = { enabled: 0, variant: 0, payload: 0, disabled: 0 };
      const mismatches = [];

      let perFlagChecked = 0;
      await pool(sc.persons, CONCURRENCY, async (person, index) => {
        const view = mergedView(sc, person);
        const body = { token: project.token, distinct_id: person.distinctId, geoip_disable: true };
        if (Object.keys(person.groups).length) body.groups = person.groups;
        if (person.request !== null) body.person_properties = person.request;
        if (Object.keys(person.groupRequest).length) body.group_properties = person.groupRequest;
        const res = await fetch(`${base}/flags?v=2`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        const text = await res.text();
        assert.equal(res.status, 200, `POST /flags for ${person.distinctId}: ${res.status} ${text}`);
        const answer = JSON.parse(text);
        assert.equal(typeof answer.flags, 'object', text.slice(0, 500));
        if (answer.errorsWhileComputingFlags) serviceErrors++;

        const local = await client.getAllFlagsAndPayloads(person.distinctId, {
          groups: view.groups,
          personProperties: view.personProperties,
          groupProperties: view.groupProperties,
          onlyEvaluateLocally: true,
        });

        // For a sample of persons, the per-flag call must give what the
        // all-flags call gave (the comparison below relies on the latter).
        if (index % PER_FLAG_SAMPLE === 0) {
          for (const flag of sc.envelope.flags) {
            const r = await client.getFeatureFlagResult(flag.key, person.distinctId, {
              groups: view.groups,
              personProperties: view.personProperties,
              groupProperties: view.groupProperties,
              onlyEvaluateLocally: true,
              sendFeatureFlagEvents: false,
            });
            const value = local.featureFlags[flag.key];
            const one = r === undefined ? undefined : { enabled: r.enabled, variant: r.variant ?? null, payload: r.payload || undefined };
            const all = value === undefined ? undefined : { enabled: value !== false, variant: typeof value === 'string' ? value : null, payload: local.featureFlagPayloads[flag.key] };
            perFlagChecked++;
            assert.deepEqual(one, all, `getFeatureFlagResult vs getAllFlagsAndPayloads for ${flag.key} / ${person.distinctId}`);
          }
        }

        for (const flag of sc.envelope.flags) {
          const value = local.featureFlags[flag.key];
          if (value === undefined) { skipped++; continue; }
          compared++;
          const sdk = {
            enabled: value !== false,
            variant: typeof value === 'string' ? value : null,
            payload: local.featureFlagPayloads[flag.key],
          };
          const got = answer.flags[flag.key];
          let ok = got !== undefined && got.key === flag.key && got.enabled === sdk.enabled &&
            (got.variant ?? null) === sdk.variant;
          if (ok) {
            const p = got.metadata?.payload;
            ok = (p === null || p === undefined || typeof p === 'string') &&
              JSON.stringify(sdkReadingOfPayload(p)) === JSON.stringify(sdk.payload) &&
              (sdk.enabled || p === null || p === undefined);
          }
          if (ok) {
            agreed++;
            if (!sdk.enabled) stats.disabled++;
            else stats.enabled++;
            if (sdk.variant) stats.variant++;
            if (sdk.payload !== undefined) stats.payload++;
          } else if (mismatches.length < 200) {
            mismatches.push({ flag: byKey.get(flag.key), person, view, sdk, service: got ?? '(absent from the response)' });
          }
        }
      });

      console.log(`differential [${label}]: ${agreed} agreements out of ${compared} compared (${skipped} skipped where the SDK gave no answer)`);
      console.log(`  agreed values: ${stats.enabled} enabled (${stats.variant} with a variant, ${stats.payload} with a payload), ${stats.disabled} disabled; ` +
        `${serviceErrors} of ${sc.persons.length} responses had errorsWhileComputingFlags; ` +
        `${perFlagChecked} per-flag SDK calls matched its all-flags call`);
      for (const m of mismatches.slice(0, SHOW_MISMATCHES)) {
        console.log('--- MISMATCH');
        console.log('flag:', JSON.stringify(m.flag));
        console.log('person:', JSON.stringify({ distinct_id: m.person.distinctId, stored: m.person.stored, request: m.person.request, groups: m.person.groups, group_request: m.person.groupRequest, static_cohorts: m.person.staticCohorts }));
        console.log('merged (what both see):', JSON.stringify(m.view));
        console.log('posthog-node:', JSON.stringify(m.sdk));
        console.log('service:', JSON.stringify(m.service));
      }
      if (mismatches.length) {
        const involved = new Set(mismatches.map((m) => m.flag.key));
        console.log(`${mismatches.length}${mismatches.length >= 200 ? '+' : ''} mismatches over ${involved.size} flags: ${[...involved].slice(0, 40).join(', ')}`);
      }
      assert.deepEqual(errors.map(String), [], 'posthog-node reported errors');
      assert.ok(compared > sc.envelope.flags.length * sc.persons.length * 0.4, `too few comparisons: ${compared}`);
      assert.ok(stats.enabled > compared * 0.1 && stats.variant > 0 && stats.payload > 0, 'the scenario exercises enabled flags, variants and payloads');
      assert.equal(agreed, compared, `${compared - agreed} disagreements`);
    });
  }
});
