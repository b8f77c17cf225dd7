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

// [] when the object is valid, else its problems.
export async function validate(obj) {
  const errors = [];
  if (!obj || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return ['not a Kubernetes object'];
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
