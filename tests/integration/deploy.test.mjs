// deploy.test.mjs - what can be checked of deploy/ without a Docker daemon
// or a cluster: both compose stacks pass `docker-compose config`; every
// Kubernetes overlay and its setup/ renders (kubectl kustomize, without a
// deprecation warning) and every object passes an offline validation
// against the Kubernetes API's schemas, which is shown to bite on a misspelt
// field and a wrong type; what the rendered objects promise (TLS for every
// host, a NetworkPolicy and the metrics scrape per service, no region in a
// selector, the GeoIP and GitHub key mounts only where they are read, the
// bootstrap Job with the api's configuration); the topic job's script run
// against a stand-in kafka-topics.sh creates the topics the services read,
// as docs/configuration.md names them; the image's build stage installs
// exactly the packages scripts/setup lists for it, its syntax line first.
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
function kustomize(overlay) {
  const r = spawnSync('kubectl', ['kustomize', path.join(DEPLOY, 'k8s/overlays', overlay)], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${overlay}: ${r.stderr}`);
  return { objects: YAML.parseAllDocuments(r.stdout).map((d) => d.toJSON()).filter(Boolean), stderr: r.stderr };
}
const render = (overlay) => kustomize(overlay).objects;
const OVERLAYS = ['us', 'eu', 'self-hosted'];
const SERVICES = ['ingest', 'flags', 'api', 'writer'];
const composeConfig = (file, args = []) => YAML.parse(execFileSync('docker-compose', [...args, '-f', path.join(DEPLOY, 'compose', file), 'config']).toString());

// docs/configuration.md's default of a variable, the same in every table that names it
function documentedDefault(name) {
  const docs = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
  const found = [...docs.matchAll(new RegExp(`^\\| \`${name}\` \\| \`([^\`]+)\` \\|`, 'gm'))].map((m) => m[1]);
  assert.ok(found.length > 0, `${name} documented`);
  assert.equal(new Set(found).size, 1, `${name}: one default`);
  return found[0];
}
// which services' config.c read a variable
const readers = (name) => SERVICES.filter((svc) => fs.readFileSync(path.join(ROOT, 'services', svc, 'config.c'), 'utf8').includes(`"${name}"`));
const byKind = (objects, kind) => objects.filter((o) => o.kind === kind);
const named = (objects, kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const selects = (selector, labels) => Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
  (selector.matchExpressions ?? []).every((e) => e.operator === 'In' && e.values.includes(labels[e.key]));

describe('deploy/', () => {
  test('docker-compose accepts both stacks, and refuses a broken one', () => {
    for (const f of ['full.yml', 'minimal.yml', 'cluster.yml']) {
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

  test('the compose cluster: every ClickHouse node in remote_servers once, its own macros, the services in cluster mode', () => {
    const stack = composeConfig('cluster.yml').services;
    const xml = fs.readFileSync(path.join(DEPLOY, 'compose', 'clickhouse-cluster.xml'), 'utf8');
    const cluster = xml.match(/<remote_servers>\s*<(\w+)>/)[1];
    const hosts = [...xml.matchAll(/<host>(clickhouse-[^<]+)<\/host>/g)].map((m) => m[1]).sort();
    const nodes = Object.keys(stack).filter((n) => n.startsWith('clickhouse-')).sort();
    assert.deepEqual(hosts, nodes);
    const macros = nodes.map((n) => `${stack[n].environment.CH_SHARD}/${stack[n].environment.CH_REPLICA}`);
    assert.equal(new Set(macros).size, nodes.length);
    for (const n of nodes) {
      assert.equal(stack[n].hostname, n);
      assert.ok(stack[n].volumes.some((v) => /clickhouse-cluster\.xml:\/etc\/clickhouse-server\/config\.d\//.test(typeof v === 'string' ? v : `${v.source}:${v.target}`)), n);
    }
    for (const svc of ['api', 'writer']) {
      assert.equal(stack[svc].environment.CLICKHOUSE_CLUSTER, cluster, svc);
      assert.ok(nodes.includes(new URL(stack[svc].environment.CLICKHOUSE_URL).hostname), svc);
    }
  });

  for (const overlay of OVERLAYS) {
    test(`the ${overlay} overlay renders and every object is valid`, async () => {
      const objects = render(overlay);
      const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
      assert.deepEqual(kinds, [
        'ConfigMap/analytics-config',
        // the cloud regions' event store is a ClickHouse cluster (components/clickhouse-cluster)
        ...(overlay === 'self-hosted' ? [] : ['ConfigMap/clickhouse-cluster-config']),
        'Deployment/api', 'Deployment/flags', 'Deployment/ingest', 'Deployment/writer',
        'HorizontalPodAutoscaler/flags', 'HorizontalPodAutoscaler/ingest',
        'Ingress/analytics',
        'NetworkPolicy/api', 'NetworkPolicy/flags', 'NetworkPolicy/ingest', 'NetworkPolicy/writer',
        'PodDisruptionBudget/api', 'PodDisruptionBudget/flags', 'PodDisruptionBudget/ingest', 'PodDisruptionBudget/writer',
        'Service/api', 'Service/flags', 'Service/ingest', 'Service/writer',
        'ServiceMonitor/analytics',
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
      const config = named(objects, 'ConfigMap', 'analytics-config').data;
      assert.equal(config.REGION, overlay);
      const hosts = objects.find((o) => o.kind === 'Ingress').spec.rules.map((r) => r.host);
      if (overlay === 'self-hosted') assert.deepEqual(hosts, ['analytics.example.com']);
      else assert.deepEqual(hosts, [`${overlay}.i.example.com`, `${overlay}.example.com`, 'oauth.example.com']);
      assert.equal(objects.filter((o) => o.kind === 'Secret').length, 0); // secrets by reference only
    });
  }

  test('current kustomize renders every overlay and setup/ without a warning', () => {
    for (const overlay of [...OVERLAYS, ...OVERLAYS.map((o) => `${o}/setup`)]) {
      assert.equal(kustomize(overlay).stderr, '', `${overlay} warns`);
    }
    // the check would see one: a deprecated field does warn
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-kustomize-'));
    try {
      fs.writeFileSync(path.join(dir, 'kustomization.yaml'), `commonLabels: {a: b}\nresources: [${path.join(DEPLOY, 'k8s/base')}]\n`);
      const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
      assert.match(r.stderr, /commonLabels' is deprecated/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const overlay of OVERLAYS) {
    test(`${overlay}: no region in a selector, TLS for every host, a NetworkPolicy and the scrape per service`, () => {
      const objects = render(overlay);
      // the region labels objects and pods, never a selector (immutable in a Deployment)
      for (const o of objects) {
        assert.equal(o.metadata.labels['analytics/region'], overlay, `${o.kind}/${o.metadata.name}`);
        const selectors = [o.spec?.selector, o.spec?.podSelector].filter(Boolean);
        for (const sel of selectors) assert.ok(!JSON.stringify(sel).includes('analytics/region'), `${o.kind}/${o.metadata.name} selects by region`);
      }
      for (const d of byKind(objects, 'Deployment')) {
        assert.equal(d.spec.template.metadata.labels['analytics/region'], overlay);
        assert.ok(selects(d.spec.selector, d.spec.template.metadata.labels), `${d.metadata.name} selects its own pods`);
      }
      // TLS: every host of the Ingress, a certificate by reference, cert-manager's issuer
      const ingress = byKind(objects, 'Ingress')[0];
      const hosts = ingress.spec.rules.map((r) => r.host);
      const tlsHosts = ingress.spec.tls.flatMap((t) => t.hosts);
      assert.deepEqual([...tlsHosts].sort(), [...hosts].sort());
      for (const t of ingress.spec.tls) assert.match(t.secretName, /^[a-z0-9-]+$/);
      assert.ok(ingress.metadata.annotations['cert-manager.io/cluster-issuer']);
      const config = named(objects, 'ConfigMap', 'analytics-config').data;
      assert.match(config.BASE_URL, /^https:\/\//);
      assert.ok(hosts.includes(new URL(config.BASE_URL).host), 'BASE_URL is one of the hosts');
      // a NetworkPolicy per service, on its pods, both directions
      const egressPorts = (np) => np.spec.egress.flatMap((e) => e.ports.map((p) => p.port)).filter((p) => p !== 53).sort((a, b) => a - b);
      const want = { ingest: [6379, 9092], flags: [6379], api: [443, 5432, 6379, 8123, 8443], writer: [5432, 6379, 8123, 8443, 9092] };
      for (const svc of SERVICES) {
        const np = named(objects, 'NetworkPolicy', svc);
        const d = named(objects, 'Deployment', svc);
        assert.ok(selects(np.spec.podSelector, d.spec.template.metadata.labels), `NetworkPolicy/${svc} applies to its pods`);
        for (const other of SERVICES.filter((o) => o !== svc)) {
          assert.ok(!selects(np.spec.podSelector, named(objects, 'Deployment', other).spec.template.metadata.labels), `NetworkPolicy/${svc} not on ${other}`);
        }
        assert.deepEqual(np.spec.policyTypes.sort(), ['Egress', 'Ingress']);
        assert.deepEqual(egressPorts(np), want[svc], `${svc} reaches only its stores`);
        const from = np.spec.ingress.flatMap((r) => r.from.map((f) => f.namespaceSelector.matchLabels['kubernetes.io/metadata.name']));
        assert.equal(from.includes('ingress-nginx'), svc !== 'writer', `${svc}: the ingress controller reaches it iff the Ingress routes to it`);
        assert.ok(from.includes('monitoring'));
        const port = d.spec.template.spec.containers[0].ports[0].name;
        for (const r of np.spec.ingress) assert.deepEqual(r.ports.map((p) => p.port), [port]);
      }
      const routed = new Set(ingress.spec.rules.flatMap((r) => r.http.paths.map((p) => p.backend.service.name)));
      assert.deepEqual([...routed].sort(), ['api', 'flags', 'ingest']);
      // the ServiceMonitor scrapes /metrics on each Service's named port
      const sm = byKind(objects, 'ServiceMonitor')[0];
      assert.deepEqual(sm.spec.endpoints.map((e) => e.path), ['/metrics']);
      for (const svc of byKind(objects, 'Service')) {
        assert.ok(selects(sm.spec.selector, svc.metadata.labels), `ServiceMonitor selects Service/${svc.metadata.name}`);
        assert.ok(svc.spec.ports.some((p) => p.name === sm.spec.endpoints[0].port));
      }
    });

    test(`${overlay}: GEOIP_DB and GITHUB_KEYS_FILE mounted only on the services that read them`, () => {
      const objects = render(overlay);
      const mounts = { GEOIP_DB: 'persistentVolumeClaim', GITHUB_KEYS_FILE: 'configMap' };
      for (const d of byKind(objects, 'Deployment')) {
        const pod = d.spec.template.spec;
        const c = pod.containers[0];
        for (const [name, source] of Object.entries(mounts)) {
          const env = (c.env ?? []).find((e) => e.name === name);
          if (!env) continue;
          assert.deepEqual(readers(name), [d.metadata.name], `${name} set on ${d.metadata.name}, read by ${readers(name)}`);
          const mount = c.volumeMounts.find((m) => env.value.startsWith(`${m.mountPath}/`));
          assert.ok(mount, `${name}=${env.value} lies on a mount`);
          assert.equal(mount.readOnly, true);
          const volume = pod.volumes.find((v) => v.name === mount.name);
          assert.ok(volume?.[source], `${name}: from a ${source}`);
        }
      }
      const set = (name) => byKind(objects, 'Deployment').filter((d) => (d.spec.template.spec.containers[0].env ?? []).some((e) => e.name === name)).map((d) => d.metadata.name);
      // the cloud regions use both; self-hosted adds them when it has them (docs/deploy.md)
      const expected = overlay === 'self-hosted' ? [[], []] : [['flags'], ['api']];
      assert.deepEqual([set('GEOIP_DB'), set('GITHUB_KEYS_FILE')], expected);
    });

    test(`${overlay}: the event store's ClickHouse cluster (CLICKHOUSE_CLUSTER, remote_servers, macros, Keeper)`, () => {
      const objects = render(overlay);
      const config = named(objects, 'ConfigMap', 'analytics-config').data;
      const ch = named(objects, 'ConfigMap', 'clickhouse-cluster-config');
      if (overlay === 'self-hosted') { // one server: no cluster mode
        assert.equal(config.CLICKHOUSE_CLUSTER, undefined);
        assert.equal(ch, undefined);
        return;
      }
      // the api and the writer read it, from the ConfigMap every Deployment takes
      assert.deepEqual(readers('CLICKHOUSE_CLUSTER'), ['api', 'writer']);
      for (const svc of ['api', 'writer']) {
        const c = named(objects, 'Deployment', svc).spec.template.spec.containers[0];
        assert.ok(c.envFrom.some((e) => e.configMapRef?.name === 'analytics-config'), svc);
        assert.ok(!(c.env ?? []).some((e) => e.name === 'CLICKHOUSE_CLUSTER'), `${svc}: not overridden`);
      }
      // the servers' config.d, parsed as ClickHouse would read it (well-formed XML)
      const py = `import json, sys, xml.etree.ElementTree as ET
r = ET.fromstring(sys.stdin.read())
rs = r.find('remote_servers')
print(json.dumps({
  'clusters': [c.tag for c in rs],
  'shards': [{'internal': s.findtext('internal_replication'), 'hosts': [x.findtext('host') + ':' + x.findtext('port') for x in s.findall('replica')]} for s in rs[0].findall('shard')],
  'macros': {m.tag: m.get('from_env') for m in r.find('macros')},
  'zookeeper': [n.findtext('host') + ':' + n.findtext('port') for n in r.find('zookeeper').findall('node')],
  'ddl': r.findtext('distributed_ddl/path'),
  'interserver': r.findtext('interserver_http_port')}))`;
      const files = Object.keys(ch.data);
      assert.deepEqual(files, ['clickhouse-cluster.xml']);
      const p = spawnSync('python3', ['-c', py], { input: ch.data[files[0]], encoding: 'utf8' });
      assert.equal(p.status, 0, p.stderr);
      const x = JSON.parse(p.stdout);
      assert.deepEqual(x.clusters, [config.CLICKHOUSE_CLUSTER], 'the services name the cluster the servers define');
      assert.ok(x.shards.length >= 2);
      const hosts = x.shards.flatMap((s) => s.hosts);
      assert.equal(new Set(hosts).size, hosts.length, 'each server once');
      for (const s of x.shards) {
        assert.equal(s.internal, 'true', 'the replicated tables copy within a shard');
        assert.ok(s.hosts.length >= 2, 'replicated');
      }
      // each server's own macros come from its pod's environment
      assert.deepEqual(x.macros, { shard: 'CH_SHARD', replica: 'CH_REPLICA' });
      assert.ok(x.zookeeper.length % 2 === 1 && x.zookeeper.length >= 3, 'a Keeper/ZooKeeper ensemble with a majority');
      assert.ok(x.ddl, 'ON CLUSTER DDL needs distributed_ddl');
      assert.ok(x.interserver, 'replicas fetch parts over the interserver port');
    });

    test(`${overlay}/setup: the bootstrap Job runs with the api's configuration, the topic Job with the region's sizes`, async () => {
      const fleet = render(overlay);
      const objects = render(`${overlay}/setup`);
      for (const o of objects) assert.deepEqual(await validate(o), [], `${o.kind}/${o.metadata.name}`);
      const api = named(fleet, 'Deployment', 'api');
      const job = named(objects, 'Job', 'bootstrap');
      const apiC = api.spec.template.spec.containers[0];
      const jobC = job.spec.template.spec.containers[0];
      assert.deepEqual(jobC.envFrom, apiC.envFrom, 'the same ConfigMap and Secret as the api');
      assert.equal(jobC.image, apiC.image);
      assert.deepEqual(jobC.args, ['api', 'bootstrap']);
      assert.equal(job.metadata.namespace, api.metadata.namespace);
      assert.equal(job.spec.template.spec.restartPolicy, 'Never');
      assert.equal(job.spec.backoffLimit, 0);
      assert.deepEqual(job.spec.template.spec.securityContext, api.spec.template.spec.securityContext);
      // everything the api reads from its environment beyond those two is
      // where it listens: a one-shot command needs none of it
      assert.deepEqual((apiC.env ?? []).map((e) => e.name).filter((n) => !/^API_(HOST|PORT)$|^GITHUB_KEYS_FILE$/.test(n)), []);
      const topics = named(objects, 'Job', 'kafka-topics');
      assert.equal(topics.metadata.namespace, api.metadata.namespace);
      const sizes = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('kafka-topics-') && !o.metadata.name.startsWith('kafka-topics-script')).data;
      const writers = named(fleet, 'Deployment', 'writer').spec.replicas;
      assert.ok(Number(sizes.TOPIC_PARTITIONS) >= writers, 'a partition for every writer');
      if (overlay !== 'self-hosted') assert.equal(sizes.TOPIC_PARTITIONS, '16'); // the writers' two each, explicit
      assert.equal(sizes.TOPIC_REPLICATION, '3');
      assert.ok(Number(sizes.TOPIC_MIN_INSYNC_REPLICAS) < Number(sizes.TOPIC_REPLICATION));
    });
  }

  test('the topic job creates the topics the services read, with the sizes it is given (compose and Kubernetes)', () => {
    const names = ['KAFKA_TOPIC', 'KAFKA_HISTORICAL_TOPIC', 'DEAD_LETTER_TOPIC'].map(documentedDefault);
    assert.deepEqual(new Set(names).size, 3);
    // the services' config.c defaults are these (the names go through rediskeys.h there)
    const keys = fs.readFileSync(path.join(ROOT, 'libcommon/include/cm/rediskeys.h'), 'utf8');
    for (const n of names) assert.ok(keys.includes(`"${n}"`), n);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-topics-'));
    try {
      // a stand-in kafka-topics.sh: records its arguments, one line a call
      fs.writeFileSync(path.join(dir, 'kafka-topics.sh'), '#!/bin/sh\nprintf "%s " "$@" >> "$CALLS"; echo >> "$CALLS"\n', { mode: 0o755 });
      const script = path.join(DEPLOY, 'k8s/setup/create-topics.sh');
      const run = (env) => {
        const calls = path.join(dir, `calls-${Math.random()}`);
        fs.writeFileSync(calls, '');
        const r = spawnSync('sh', [script], { env: { PATH: process.env.PATH, KAFKA_BIN: dir, CALLS: calls, KAFKA_CLIENT_PROPERTIES: path.join(dir, 'none'), ...env }, encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        const creates = fs.readFileSync(calls, 'utf8').split('\n').filter((l) => l.includes('--create')).map((l) => l.trim().split(' '));
        const arg = (a, flag) => a[a.indexOf(flag) + 1];
        return creates.map((a) => ({ broker: arg(a, '--bootstrap-server'), topic: arg(a, '--topic'), partitions: arg(a, '--partitions'), replication: arg(a, '--replication-factor'), configs: a.filter((_, i) => a[i - 1] === '--config').sort(), ifNotExists: a.includes('--if-not-exists') }));
      };
      // Kubernetes: the Job's environment is analytics-config and kafka-topics
      const fleet = render('us');
      const setup = render('us/setup');
      const job = named(setup, 'Job', 'kafka-topics');
      const c = job.spec.template.spec.containers[0];
      assert.equal(c.image, 'apache/kafka:3.8.0');
      const env = {};
      for (const ref of c.envFrom) Object.assign(env, (named(fleet, 'ConfigMap', ref.configMapRef.name) ?? named(setup, 'ConfigMap', ref.configMapRef.name)).data);
      const script0 = named(setup, 'ConfigMap', job.spec.template.spec.volumes.find((v) => v.name === 'script').configMap.name);
      assert.equal(script0.data['create-topics.sh'], fs.readFileSync(script, 'utf8'), 'the Job runs this script');
      assert.deepEqual(c.command, ['/bin/sh', `${c.volumeMounts.find((m) => m.name === 'script').mountPath}/create-topics.sh`]);
      let made = run(env);
      assert.deepEqual(made.map((m) => m.topic), names);
      for (const m of made) {
        assert.equal(m.broker, env.KAFKA_BROKERS);
        assert.equal(m.partitions, '16');
        assert.equal(m.replication, '3');
        assert.deepEqual(m.configs, ['min.insync.replicas=2', 'retention.ms=604800000']);
        assert.ok(m.ifNotExists, 'idempotent');
      }
      // the names follow the services' own variables when an operator sets them
      made = run({ ...env, KAFKA_TOPIC: 'eu_events', DEAD_LETTER_TOPIC: 'eu_dlq' });
      assert.deepEqual(made.map((m) => m.topic), ['eu_events', names[1], 'eu_dlq']);
      // SASL/SSL: a client properties file is passed when there is one
      fs.writeFileSync(path.join(dir, 'client.properties'), 'security.protocol=SASL_SSL\n');
      const calls = path.join(dir, 'calls-props');
      spawnSync('sh', [script], { env: { PATH: process.env.PATH, KAFKA_BIN: dir, CALLS: calls, KAFKA_CLIENT_PROPERTIES: path.join(dir, 'client.properties'), ...env } });
      assert.match(fs.readFileSync(calls, 'utf8'), /--command-config \S+client\.properties/);
      // compose: the one-shot kafka-topics service, run before ingest and the writer
      const stack = composeConfig('full.yml').services;
      const svc = stack['kafka-topics'];
      assert.equal(svc.image, 'apache/kafka:3.8.0');
      assert.equal(svc.restart, 'no');
      assert.ok(svc.volumes.some((v) => v.startsWith(`${script}:${svc.entrypoint[1]}`)), 'compose runs the same script');
      made = run(svc.environment);
      assert.deepEqual(made.map((m) => m.topic), names);
      for (const m of made) assert.deepEqual([m.broker, m.partitions, m.replication], ['kafka:9092', '16', '1']);
      const sized = composeConfig('full.yml', []).services['kafka-topics'];
      assert.equal(sized.environment.TOPIC_PARTITIONS, '16');
      const env2 = spawnSync('docker-compose', ['-f', path.join(DEPLOY, 'compose/full.yml'), 'config'], { env: { ...process.env, KAFKA_PARTITIONS: '32', KAFKA_RETENTION_MS: '86400000' }, encoding: 'utf8' });
      const resized = YAML.parse(env2.stdout).services['kafka-topics'].environment;
      assert.deepEqual([resized.TOPIC_PARTITIONS, resized.TOPIC_RETENTION_MS], ['32', '86400000']);
      for (const s of ['ingest', 'writer']) assert.deepEqual(stack[s].depends_on['kafka-topics'], { condition: 'service_completed_successfully' }, s);
      assert.equal(stack.kafka.environment.KAFKA_AUTO_CREATE_TOPICS_ENABLE, 'false', 'no topic appears by accident');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the compose edge: TLS on 443 with certificates by reference, 80 redirecting; laptop.env for plain HTTP on 127.0.0.1:8000', () => {
    for (const file of ['full.yml', 'minimal.yml']) {
      const edge = composeConfig(file).services.edge;
      const mounts = Object.fromEntries(edge.volumes.map((v) => v.split(':')).map(([from, to]) => [to, from]));
      assert.equal(mounts['/etc/nginx/nginx.conf'], path.join(DEPLOY, 'compose/edge.conf'));
      assert.equal(mounts['/etc/nginx/edge-routes.conf'], path.join(DEPLOY, 'compose/edge-routes.conf'));
      assert.equal(mounts['/etc/nginx/certs'], path.join(DEPLOY, 'compose/certs'));
      assert.deepEqual(edge.ports.sort(), ['0.0.0.0:443:443/tcp', '0.0.0.0:80:80/tcp']);
      const edgeConf = fs.readFileSync(path.join(DEPLOY, 'compose/edge.conf'), 'utf8');
      assert.match(edgeConf, /listen 443 ssl;/);
      assert.match(edgeConf, /ssl_certificate \/etc\/nginx\/certs\/tls\.crt;/);
      const laptop = composeConfig(file, ['--env-file', path.join(DEPLOY, 'compose/laptop.env')]).services;
      const lm = Object.fromEntries(laptop.edge.volumes.map((v) => v.split(':')).map(([from, to]) => [to, from]));
      assert.equal(lm['/etc/nginx/nginx.conf'], path.join(DEPLOY, 'compose/edge-http.conf'));
      assert.ok(laptop.edge.ports.includes('127.0.0.1:8000:80/tcp'));
      assert.ok(laptop.edge.ports.every((p) => p.startsWith('127.0.0.1:')), 'a laptop listens on loopback only');
      assert.equal(laptop.api.environment.BASE_URL, 'http://localhost:8000');
      assert.match(composeConfig(file).services.api.environment.BASE_URL, /^https:/);
    }
    // the certificate directory holds no key in the repository
    const tracked = execFileSync('git', ['-C', ROOT, 'ls-files', 'deploy/compose/certs']).toString().trim().split('\n').sort();
    assert.deepEqual(tracked, ['deploy/compose/certs/.gitignore', 'deploy/compose/certs/README.md']);
  });

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
    // the ServiceMonitor, a custom resource, is checked by its fields' names too
    const sm = render('us').find((o) => o.kind === 'ServiceMonitor');
    assert.deepEqual(await validate(sm), []);
    const badSm = structuredClone(sm);
    badSm.spec.endpoints[0].pth = '/metrics';
    badSm.spec.selectr = badSm.spec.selector;
    delete badSm.spec.selector;
    errors = await validate(badSm);
    assert.ok(errors.some((e) => /endpoints\[0\]\.pth: no such field/.test(e)), errors.join('\n'));
    assert.ok(errors.some((e) => /spec\.selectr: no such field/.test(e)), errors.join('\n'));
    assert.ok(errors.some((e) => /spec\.selector: required/.test(e)), errors.join('\n'));
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

  test("the Dockerfile's syntax line is its first, its base images an exact release", () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    assert.match(dockerfile.split('\n')[0], /^# syntax=docker\/dockerfile:\d/);
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    assert.equal(bases.length, 2);
    for (const b of bases) assert.match(b, /^debian:\d+\.\d+-slim(@sha256:[0-9a-f]{64})?$/, `${b}: a point release, not a moving tag`);
    assert.equal(new Set(bases).size, 1, 'both stages on one release (the binaries link what they were built against)');
  });

  test('docs/deploy.md runs the bootstrap as the Job, with its environment', () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    assert.doesNotMatch(docs, /kubectl[^\n]* run [^\n]*api bootstrap/, 'kubectl run passes no environment');
    for (const overlay of OVERLAYS) assert.ok(fs.existsSync(path.join(DEPLOY, 'k8s/overlays', overlay, 'setup/kustomization.yaml')));
    assert.match(docs, /kubectl apply -k deploy\/k8s\/overlays\/us\/setup/);
    assert.match(docs, /logs job\/bootstrap/);
  });
});
