// deploy.test.mjs - what can be checked of deploy/ without a Docker daemon
// or a cluster: both compose stacks pass `docker-compose config`; every
// Kubernetes overlay renders (kubectl kustomize) and every object passes an
// offline validation against the Kubernetes API's schemas, which is shown
// to bite on a misspelt field and a wrong type; the image's build stage
// installs exactly the packages scripts/setup lists for it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT } from './lib/proc.mjs';
import { validate } from './lib/k8s_validate.mjs';

const DEPLOY = path.join(ROOT, 'deploy');
const render = (overlay) => YAML.parseAllDocuments(execFileSync('kubectl', ['kustomize', path.join(DEPLOY, 'k8s/overlays', overlay)], { stdio: ['ignore', 'pipe', 'pipe'] }).toString()).map((d) => d.toJSON()).filter(Boolean);

describe('deploy/', () => {
  test('docker-compose accepts both stacks, and refuses a broken one', () => {
    for (const f of ['full.yml', 'minimal.yml']) {
      const r = spawnSync('docker-compose', ['-f', path.join(DEPLOY, 'compose', f), 'config', '-q'], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${f}: ${r.stderr}`);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-compose-'));
    const broken = fs.readFileSync(path.join(DEPLOY, 'compose/minimal.yml'), 'utf8').replace('    depends_on:', '    depends_onn:');
    fs.writeFileSync(path.join(dir, 'broken.yml'), broken);
    fs.copyFileSync(path.join(DEPLOY, 'compose/edge.conf'), path.join(dir, 'edge.conf'));
    const r = spawnSync('docker-compose', ['-f', path.join(dir, 'broken.yml'), 'config', '-q'], { encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /depends_onn/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const overlay of ['us', 'eu', 'self-hosted']) {
    test(`the ${overlay} overlay renders and every object is valid`, async () => {
      const objects = render(overlay);
      const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
      assert.deepEqual(kinds, [
        'ConfigMap/analytics-config',
        'Deployment/api', 'Deployment/flags', 'Deployment/ingest', 'Deployment/writer',
        'HorizontalPodAutoscaler/flags', 'HorizontalPodAutoscaler/ingest',
        'Ingress/analytics',
        'PodDisruptionBudget/api', 'PodDisruptionBudget/flags', 'PodDisruptionBudget/ingest', 'PodDisruptionBudget/writer',
        'Service/api', 'Service/flags', 'Service/ingest', 'Service/writer',
      ]);
      for (const o of objects) assert.deepEqual(await validate(o), [], `${o.kind}/${o.metadata.name}`);
      // what the issue asks of each service, checked on the rendered objects
      for (const d of objects.filter((o) => o.kind === 'Deployment')) {
        const c = d.spec.template.spec.containers[0];
        assert.equal(c.readinessProbe.httpGet.path, '/_ready');
        assert.equal(c.livenessProbe.httpGet.path, '/_health');
        assert.ok(d.spec.template.spec.terminationGracePeriodSeconds >= 35); // drain 30 s + preStop
        assert.ok(c.resources.requests.memory && c.resources.limits.memory);
        assert.equal(d.spec.template.metadata.annotations['prometheus.io/scrape'], 'true');
        assert.deepEqual(c.envFrom.map((e) => e.configMapRef?.name ?? e.secretRef?.name), ['analytics-config', 'analytics-secrets']);
      }
      const config = objects.find((o) => o.kind === 'ConfigMap').data;
      assert.equal(config.REGION, overlay);
      const hosts = objects.find((o) => o.kind === 'Ingress').spec.rules.map((r) => r.host);
      if (overlay === 'self-hosted') assert.deepEqual(hosts, ['analytics.example.com']);
      else assert.deepEqual(hosts, [`${overlay}.i.example.com`, `${overlay}.example.com`, 'oauth.example.com']);
      assert.equal(objects.filter((o) => o.kind === 'Secret').length, 0); // secrets by reference only
    });
  }

  test('the validator bites: a misspelt field, a wrong type, a wrong kind', async () => {
    const deployment = render('us').find((o) => o.kind === 'Deployment');
    const bad = (mutate) => { const o = structuredClone(deployment); mutate(o); return validate(o); };
    let errors = await bad((o) => { o.spec.template.spec.containers[0].imagePullPolicyy = 'Always'; });
    assert.ok(errors.some((e) => /imagePullPolicyy: no such field/.test(e)), errors.join('\n'));
    errors = await bad((o) => { o.spec.replica = 3; });
    assert.ok(errors.some((e) => /spec\.replica: no such field/.test(e)), errors.join('\n'));
    errors = await bad((o) => { o.spec.template.spec.containers[0].readinessProbe.httpGett = o.spec.template.spec.containers[0].readinessProbe.httpGet; });
    assert.ok(errors.some((e) => /httpGett/.test(e)), errors.join('\n'));
    errors = await bad((o) => { o.spec.replicas = 'two'; });
    assert.ok(errors.some((e) => /replicas must be integer/.test(e)), errors.join('\n'));
    errors = await bad((o) => { delete o.spec.template.spec.containers[0].name; });
    assert.ok(errors.some((e) => /name/.test(e)), errors.join('\n'));
    errors = await validate({ ...deployment, kind: 'Deploymentt' });
    assert.ok(errors.length > 0);
  });

  test("the image's build stage installs exactly what scripts/setup lists for it", () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const stage = dockerfile.split(/^FROM /m)[1];
    const installed = [...stage.matchAll(/^\s+([a-z0-9][a-z0-9.+-]+)\s*\\$/gm)].map((m) => m[1]).sort();
    const listed = execFileSync(path.join(ROOT, 'scripts/setup'), ['--image-build-packages']).toString().trim().split('\n').sort();
    assert.ok(listed.length > 10);
    assert.deepEqual(installed, listed);
    // the entrypoint runs each service and nothing else
    const entry = fs.readFileSync(path.join(DEPLOY, 'docker/entrypoint.sh'), 'utf8');
    assert.match(entry, /ingest \| flags \| api \| writer\)/);
    assert.match(dockerfile, /^USER 10001:10001$/m);
  });
});
