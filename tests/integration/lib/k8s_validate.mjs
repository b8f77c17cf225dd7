// k8s_validate.mjs - offline validation of rendered Kubernetes objects
// against the Kubernetes API's own schemas, twice over: kubernetes-models
// (types, enums, required fields: the OpenAPI schemas compiled) and a walk
// of every field against the official client's models (@kubernetes/client-
// node's attribute maps), which refuses a field the API does not have: the
// misspelling the JSON schemas alone let through.
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
// the client's index pulls in an HTTP stack this node lacks: its models only
const MODELS = path.join(path.dirname(require.resolve('@kubernetes/client-node/package.json')), 'dist/gen/models');

const loaded = new Map();
async function model(name) {
  if (!loaded.has(name)) {
    let m = null;
    try {
      m = (await import(pathToFileURL(path.join(MODELS, `${name}.js`)).href))[name];
    } catch { /* not a model: a primitive or an alias */ }
    loaded.set(name, m);
  }
  return loaded.get(name);
}

const PRIMITIVES = new Set(['string', 'number', 'boolean', 'Date', 'object', 'any', 'IntOrString']);

async function walk(value, type, at, errors) {
  if (value === null || value === undefined) return;
  let m;
  if ((m = type.match(/^Array<(.+)>$/))) {
    if (!Array.isArray(value)) return errors.push(`${at}: expected a list`);
    for (let i = 0; i < value.length; i++) await walk(value[i], m[1], `${at}[${i}]`, errors);
    return;
  }
  if ((m = type.match(/^\{ \[key: string\]: (.+); \}$/))) {
    for (const [k, v] of Object.entries(value)) await walk(v, m[1], `${at}.${k}`, errors);
    return;
  }
  if (PRIMITIVES.has(type)) return;
  const cls = await model(type);
  if (!cls) return;
  if (typeof value !== 'object' || Array.isArray(value)) return errors.push(`${at}: expected an object (${type})`);
  const fields = new Map(cls.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value)) {
    if (!fields.has(k)) errors.push(`${at}.${k}: no such field in ${type}`);
    else await walk(v, fields.get(k), `${at}.${k}`, errors);
  }
}

// "apps/v1" + "Deployment" -> the client's "V1Deployment"
function modelName(apiVersion, kind) {
  const version = apiVersion.split('/').pop();
  return `${version[0].toUpperCase()}${version.slice(1)}${kind}`;
}

// Custom resources (no schema in the API's models): the Prometheus
// Operator's ServiceMonitor, its fields by name as the operator's CRD
// defines them, the selectors and metadata walked as the API's own types.
const SERVICE_MONITOR = {
  spec: ['jobLabel', 'targetLabels', 'podTargetLabels', 'endpoints', 'selector', 'selectorMechanism',
    'namespaceSelector', 'sampleLimit', 'scrapeProtocols', 'fallbackScrapeProtocol', 'targetLimit',
    'labelLimit', 'labelNameLengthLimit', 'labelValueLengthLimit', 'scrapeClassicHistograms',
    'nativeHistogramBucketLimit', 'nativeHistogramMinBucketFactor', 'convertClassicHistogramsToNHCB',
    'keepDroppedTargets', 'attachMetadata', 'scrapeClass', 'bodySizeLimit'],
  endpoint: ['port', 'targetPort', 'path', 'scheme', 'params', 'interval', 'scrapeTimeout', 'tlsConfig',
    'bearerTokenFile', 'bearerTokenSecret', 'authorization', 'honorLabels', 'honorTimestamps',
    'trackTimestampsStaleness', 'basicAuth', 'oauth2', 'metricRelabelings', 'relabelings', 'proxyUrl',
    'noProxy', 'proxyFromEnvironment', 'proxyConnectHeader', 'followRedirects', 'enableHttp2', 'filterRunning'],
  namespaceSelector: ['any', 'matchNames'],
};

function known(value, names, at, errors) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return errors.push(`${at}: expected an object`);
  for (const k of Object.keys(value)) if (!names.includes(k)) errors.push(`${at}.${k}: no such field`);
}

async function validateServiceMonitor(obj) {
  const errors = [];
  const at = `ServiceMonitor/${obj.metadata?.name}`;
  known(obj, ['apiVersion', 'kind', 'metadata', 'spec'], at, errors);
  await walk(obj.metadata, 'V1ObjectMeta', `${at}.metadata`, errors);
  const spec = obj.spec ?? {};
  known(spec, SERVICE_MONITOR.spec, `${at}.spec`, errors);
  if (!spec.selector) errors.push(`${at}.spec.selector: required`);
  await walk(spec.selector, 'V1LabelSelector', `${at}.spec.selector`, errors);
  if (spec.namespaceSelector) known(spec.namespaceSelector, SERVICE_MONITOR.namespaceSelector, `${at}.spec.namespaceSelector`, errors);
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0) errors.push(`${at}.spec.endpoints: required, a list`);
  for (const [i, e] of (Array.isArray(spec.endpoints) ? spec.endpoints : []).entries()) {
    known(e, SERVICE_MONITOR.endpoint, `${at}.spec.endpoints[${i}]`, errors);
    if (e.port === undefined && e.targetPort === undefined) errors.push(`${at}.spec.endpoints[${i}]: port or targetPort required`);
  }
  return errors;
}

// [] when the object is valid, else its problems.
export async function validate(obj) {
  const errors = [];
  if (!obj || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return ['not a Kubernetes object'];
  if (obj.apiVersion === 'monitoring.coreos.com/v1' && obj.kind === 'ServiceMonitor') return validateServiceMonitor(obj);
  let Cls;
  try {
    Cls = (await import(`kubernetes-models/${obj.apiVersion}`))[obj.kind]; // core: "v1"
  } catch {
    Cls = undefined;
  }
  if (!Cls) return [`${obj.apiVersion} ${obj.kind}: not a known kind`];
  try {
    new Cls(obj).validate();
  } catch (e) {
    errors.push(`${obj.kind}/${obj.metadata?.name}: ${e.message}`);
  }
  const name = modelName(obj.apiVersion, obj.kind);
  if (!(await model(name))) errors.push(`${name}: no model to check fields with`);
  else await walk(obj, name, `${obj.kind}/${obj.metadata?.name}`, errors);
  return errors;
}
