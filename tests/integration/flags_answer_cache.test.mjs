// flags_answer_cache.test.mjs - answers from the answer cache (FLAGS_ANSWER_CACHE,
// docs/flags.md "Reused answers") are byte for byte the answers the same
// requests get with the cache off.
//
// One real redis-server holds two random scenarios (tests/integration/lib/flaggen.mjs):
// one whose date operators are rewritten into other operators (definitions
// that never read the clock: its answers are cached) and one kept as
// generated (date conditions: never cached). Two flags processes read it:
// the reference with FLAGS_ANSWER_CACHE=0 and one with the default cache.
// Every person's request, in v2 and legacy form, goes twice to the cached
// process and once to the reference; the three answers must be equal byte
// for byte but for requestId and evaluatedAt, which every answer has anew,
// whether sent plain or gzip-compressed (Accept-Encoding: gzip).

process.env.TZ = 'UTC';

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { BUILD, startServer } from './lib/proc.mjs';
import { startRedis, redisCommand } from './lib/redis.mjs';
import { generateScenario, makeRng, storeRecords } from './lib/flaggen.mjs';

const FLAGS_BIN = path.join(BUILD, 'bin/flags');

const PROJECTS = [
  { projectId: 21, token: 'phc_answer_cache_clockfree', clockFree: true, gen: { seed: 0xcac4e1, flags: 400, persons: 120 } },
  { projectId: 22, token: 'phc_answer_cache_dates', clockFree: false, gen: { seed: 0xcac4e2, flags: 150, persons: 40 } },
];

// The envelope as stored: for the clock-free project every date operator
// becomes another operator (its value stays: what the answer is does not
// matter here, only that both processes give the same one).
function envelopeText(project, sc) {
  let text = JSON.stringify(sc.envelope);
  if (project.clockFree) {
    text = text.replaceAll('"is_date_before"', '"lt"').replaceAll('"is_date_after"', '"gt"')
      .replaceAll('"is_date_exact"', '"exact"');
    assert.ok(!/is_date/i.test(text));
  } else {
    assert.ok(/is_date/.test(text), 'the dated scenario has date conditions');
  }
  return text;
}

async function storeScenario(port, project, sc) {
  const { projectId, token } = project;
  await redisCommand(port, 'HSET', 'projects:tokens', token, String(projectId));
  await redisCommand(port, 'HSET', 'flags:definitions', String(projectId), envelopeText(project, sc));
  await storeRecords(port, projectId, sc);
}

// The answer without the two fields every answer has anew.
const stable = (text) => text.replace(/"requestId":"[0-9a-f-]+"/, '"requestId":""').replace(/"evaluatedAt":[0-9]+/, '"evaluatedAt":0');

// POST /flags over node:http (which adds no Accept-Encoding of its own):
// the answer's text, gunzipped here when the server sent gzip.
function post(base, query, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/flags${query}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          const raw = Buffer.concat(chunks);
          const gzipped = res.headers['content-encoding'] === 'gzip';
          const text = (gzipped ? zlib.gunzipSync(raw) : raw).toString('utf8');
          assert.equal(res.statusCode, 200, `${query} ${body.slice(0, 200)}: ${res.statusCode} ${text.slice(0, 300)}`);
          const wantsGzip = /gzip/.test(headers['Accept-Encoding'] || '') && raw.length > 0 && Buffer.byteLength(text) >= 1024;
          assert.equal(gzipped, wantsGzip, `gzip exactly when asked for and the answer is 1 KiB or more (${text.length} B)`);
          resolve({ text, gzipped });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function metric(base, name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = text.match(new RegExp(`^${name} ([0-9]+)`, 'm'));
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

describe('flags answer cache: the same bytes as without it', () => {
  let redis;
  let cached;
  let reference;

  before(async () => {
    redis = await startRedis();
    for (const project of PROJECTS) {
      project.scenario = generateScenario({ ...project.gen, projectId: project.projectId });
      await storeScenario(redis.port, project, project.scenario);
    }
    const env = { FLAGS_PORT: '0', REDIS_URL: redis.url, LOG_LEVEL: 'warn', TZ: 'UTC' };
    cached = await startServer(FLAGS_BIN, env, { timeoutMs: 20000, ready: true });
    reference = await startServer(FLAGS_BIN, { ...env, FLAGS_ANSWER_CACHE: '0' }, { timeoutMs: 20000, ready: true });
  });

  after(async () => {
    for (const p of [cached, reference]) {
      if (!p) continue;
      const { code, signal } = await p.stop();
      assert.equal(code, 0, `flags exit ${code}/${signal}: ${p.stderr()}`);
    }
    if (redis) await redis.stop();
  });

  for (const project of PROJECTS) {
    test(`project ${project.projectId} (${project.clockFree ? 'no date conditions: cached' : 'date conditions: not cached'})`, async () => {
      const sc = project.scenario;
      const cbase = `http://127.0.0.1:${cached.port}`;
      const rbase = `http://127.0.0.1:${reference.port}`;
      const rng = makeRng(project.gen.seed ^ 0x5a5a);
      const hitsBefore = await metric(cbase, 'flags_answer_cache_hits_total');
      let requests = 0;
      let withErrors = 0;
      let expectedHits = 0;
      const seen = new Set();
      const expectLookup = (key) => {
        if (seen.has(key)) expectedHits++;
        else seen.add(key);
      };
      for (const person of sc.persons) {
        const body = { token: project.token, distinct_id: person.distinctId, geoip_disable: true };
        if (Object.keys(person.groups).length) body.groups = person.groups;
        if (person.request !== null) body.person_properties = person.request;
        if (Object.keys(person.groupRequest).length) body.group_properties = person.groupRequest;
        // A few requests name only some flags, or a runtime, or come from a browser.
        const roll = rng.float();
        if (roll < 0.1) body.flag_keys_to_evaluate = sc.envelope.flags.slice(0, 5).map((f) => f.key);
        else if (roll < 0.2) body.evaluation_runtime = 'client';
        const headers = rng.chance(0.2) ? { Origin: 'https://app.example.com' } : {};
        const text = JSON.stringify(body);
        for (const query of ['?v=2', '?v=2&config=true', '']) {
          // Half the clients accept gzip (as the SDKs do): the first answer,
          // the repeated one (its compressed head cached) and the reference
          // (compressed afresh) must all inflate to the same bytes.
          const enc = rng.chance(0.5) ? { 'Accept-Encoding': 'gzip, deflate' } : {};
          const answers = [];
          for (const base of [cbase, cbase, rbase]) answers.push(await post(base, query, text, { ...headers, ...enc }));
          const [first, second, ref] = answers.map((a) => a.text);
          assert.equal(stable(first), stable(ref), `${query} ${text}: first answer differs from the reference`);
          assert.equal(stable(second), stable(ref), `${query} ${text}: repeated answer differs from the reference`);
          assert.notEqual(JSON.parse(first).requestId, JSON.parse(second).requestId, 'every answer has its own requestId');
          if (JSON.parse(ref).errorsWhileComputingFlags) {
            withErrors++; // never kept, so never a hit
          } else {
            // The cache's lookups as the server makes them: the flags part
            // (config=true changes only the envelope: it shares v=2's), then
            // for a gzipped answer the part's compressed head.
            const plainKey = `${query === '' ? 'legacy' : 'v2'}|${headers.Origin || ''}|${text}`;
            for (const a of answers.slice(0, 2)) {
              expectLookup(plainKey);
              if (a.gzipped) expectLookup(`${plainKey}|gzip`);
            }
          }
          requests++;
        }
      }
      const hits = (await metric(cbase, 'flags_answer_cache_hits_total')) - hitsBefore;
      if (project.clockFree) {
        // Every repeated request without errors was answered from the cache;
        // an answer with errors is never kept.
        assert.ok(requests - withErrors > 0, 'some answers without errors');
        assert.equal(hits, expectedHits, `${hits} hits for ${requests} requests, ${withErrors} with errors`);
      } else {
        assert.equal(hits, 0, 'definitions with date conditions are never served from the cache');
      }
    });
  }
});
