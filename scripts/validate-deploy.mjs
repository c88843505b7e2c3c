// `pnpm deploy:check`: validates what a platform team deploys, without a cluster or a Docker engine.
// - every Kubernetes object in deploy/k8s (base, and base + each overlay's patches) against the
//   Kubernetes schemas of the kubernetes-models package;
// - the shape rules of deploy/README.md: per service a Deployment (readiness /readyz, liveness
//   /healthz, requests and limits), Service, HorizontalPodAutoscaler and PodDisruptionBudget, and
//   a migration Job; the gateway's probes and scrape on its ops port, which its Service does not expose;
//   per service with background work its API (PROCESS_ROLE=api) and a `<service>-worker` Deployment
//   (PROCESS_ROLE=worker, same image and SERVICE, a CPU request no higher than its API's, no Service) with its
//   HorizontalPodAutoscaler and PodDisruptionBudget;
// - the NetworkPolicies (scripts/lib/network-policy-check.mjs): who may reach whom, computed from the
//   policies, equals the edge table there; a default-deny; internet egress excepts private ranges;
// - docker-compose.yml with `docker-compose config` (Debian's docker-compose needs no engine for it).
// Options (for tests of this script): `--k8s <dir>` checks another copy of deploy/k8s, `--no-compose` skips compose.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { checkNetworkPolicies } from './lib/network-policy-check.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const k8s = path.resolve(arg('--k8s') ?? path.join(root, 'deploy/k8s'));
const SERVICES = ['gateway', 'booking', 'availability', 'invitation', 'calendar-sync', 'webhook-dispatch'];
/** The services with background work: each also runs as `<service>-worker` (PROCESS_ROLE, README). */
const WORKER_SERVICES = ['booking', 'availability', 'invitation', 'calendar-sync', 'webhook-dispatch'];
const problems = [];

// kubernetes-models is ESM-only, hence this script is .mjs.
const load = async (group, kind) => (await import(`kubernetes-models/${group}/${kind}`))[kind];
const MODELS = {
  'v1/ConfigMap': await load('v1', 'ConfigMap'),
  'v1/Secret': await load('v1', 'Secret'),
  'v1/Service': await load('v1', 'Service'),
  'apps/v1/Deployment': await load('apps/v1', 'Deployment'),
  'batch/v1/Job': await load('batch/v1', 'Job'),
  'autoscaling/v2/HorizontalPodAutoscaler': await load('autoscaling/v2', 'HorizontalPodAutoscaler'),
  'policy/v1/PodDisruptionBudget': await load('policy/v1', 'PodDisruptionBudget'),
  'networking.k8s.io/v1/NetworkPolicy': await load('networking.k8s.io/v1', 'NetworkPolicy'),
};

function readObjects(file) {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length) problems.push(`${path.relative(root, file)}: ${d.errors[0].message}`);
    return d.toJS();
  });
}

function kustomization(dir) {
  return readObjects(path.join(dir, 'kustomization.yaml'))[0];
}

function build(dir) {
  const k = kustomization(dir);
  const objects = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    objects.push(...(r.endsWith('.yaml') ? readObjects(p) : build(p)));
  }
  for (const patch of k.patches ?? []) {
    for (const p of readObjects(path.join(dir, patch.path))) {
      const target = objects.find((o) => o.kind === p.kind && o.metadata.name === p.metadata.name);
      if (!target) problems.push(`${patch.path}: patches ${p.kind}/${p.metadata.name}, which the base does not have`);
      else Object.assign(target, merge(target, p));
    }
  }
  return objects;
}

function merge(a, b) {
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
    return out;
  }
  return b;
}

function validate(objects, where) {
  for (const o of objects) {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!Model) {
      problems.push(`${where}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${where}: ${o.kind}/${o.metadata?.name}: ${err.message.split('\n').slice(0, 3).join(' ')}`);
    }
  }
}

function checkShape(objects, where) {
  const find = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  for (const s of SERVICES) {
    for (const kind of ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) {
      if (!find(kind, s)) problems.push(`${where}: ${s} has no ${kind}`);
    }
    const c = find('Deployment', s)?.spec?.template?.spec?.containers?.[0];
    if (!c) continue;
    if (c.readinessProbe?.httpGet?.path !== '/readyz') problems.push(`${where}: ${s} readiness is not /readyz`);
    if (c.livenessProbe?.httpGet?.path !== '/healthz') problems.push(`${where}: ${s} liveness is not /healthz`);
    if (!c.resources?.requests || !c.resources?.limits) problems.push(`${where}: ${s} lacks resource requests/limits`);
  }
  const envOf = (c, name) => c?.env?.find((e) => e.name === name)?.value;
  /** CPU request in millicores ("250m", "1", "0.5"). */
  const millis = (q) => (typeof q === 'string' && q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
  for (const s of WORKER_SERVICES) {
    const w = `${s}-worker`;
    for (const kind of ['Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) {
      if (!find(kind, w)) problems.push(`${where}: ${w} has no ${kind}`);
    }
    if (find('Service', w)) problems.push(`${where}: ${w} has a Service (a worker serves no API: nothing calls it)`);
    const api = find('Deployment', s)?.spec?.template?.spec?.containers?.[0];
    const c = find('Deployment', w)?.spec?.template?.spec?.containers?.[0];
    if (api && envOf(api, 'PROCESS_ROLE') !== 'api') problems.push(`${where}: ${s} does not run with PROCESS_ROLE=api (its background work is ${w}'s)`);
    if (!c) continue;
    if (envOf(c, 'PROCESS_ROLE') !== 'worker') problems.push(`${where}: ${w} does not run with PROCESS_ROLE=worker`);
    if (envOf(c, 'SERVICE') !== s) problems.push(`${where}: ${w} does not run SERVICE=${s}`);
    if (c.image !== api?.image) problems.push(`${where}: ${w} runs another image than ${s} (the role is a setting, not a binary)`);
    if (c.readinessProbe?.httpGet?.path !== '/readyz') problems.push(`${where}: ${w} readiness is not /readyz`);
    if (c.livenessProbe?.httpGet?.path !== '/healthz') problems.push(`${where}: ${w} liveness is not /healthz`);
    if (!c.resources?.requests || !c.resources?.limits) problems.push(`${where}: ${w} lacks resource requests/limits`);
    else if (!(millis(c.resources.requests.cpu) <= millis(api?.resources?.requests?.cpu))) {
      problems.push(`${where}: ${w} requests more CPU than ${s} (the background work gives way to the API under contention)`);
    }
  }
  if (!objects.some((o) => o.kind === 'Job')) problems.push(`${where}: no migration Job`);
  // The gateway's public port answers neither /readyz nor /metrics: both on its ops port only.
  const gw = find('Deployment', 'gateway')?.spec?.template;
  const ops = gw?.spec?.containers?.[0]?.ports?.find((p) => p.name === 'ops');
  if (!ops) problems.push(`${where}: gateway has no container port named ops`);
  else {
    if (gw.spec.containers[0].readinessProbe?.httpGet?.port !== 'ops') problems.push(`${where}: gateway readiness is not on its ops port`);
    if (gw.metadata?.annotations?.['prometheus.io/port'] !== String(ops.containerPort)) problems.push(`${where}: gateway is not scraped on its ops port`);
    if (find('Service', 'gateway')?.spec?.ports?.some((p) => p.targetPort === 'ops' || p.targetPort === ops.containerPort)) problems.push(`${where}: the gateway Service exposes the ops port`);
  }
}

const base = build(path.join(k8s, 'base'));
validate(base, 'base');
checkShape(base, 'base');
problems.push(...checkNetworkPolicies(base, 'base'));
const production = build(path.join(k8s, 'overlays/production'));
validate(production, 'overlays/production');
checkShape(production, 'overlays/production');
problems.push(...checkNetworkPolicies(production, 'overlays/production', kustomization(path.join(k8s, 'overlays/production')).namespace));
validate(readObjects(path.join(k8s, 'secrets.example.yaml')), 'secrets.example.yaml');
console.log(`deploy:check: ${base.length} base objects and ${production.length} production objects checked against the Kubernetes schemas`);
console.log(`deploy:check: NetworkPolicies checked against the edge table (${base.filter((o) => o.kind === 'NetworkPolicy').length} policies)`);

const compose = process.argv.includes('--no-compose') ? { skipped: true } : spawnSync('docker-compose', ['config', '-q'], { cwd: root, encoding: 'utf8' });
if (compose.skipped) console.log('deploy:check: docker-compose.yml not checked (--no-compose)');
else if (compose.error) problems.push('docker-compose is not installed (apt-get install -y docker-compose); docker-compose.yml was not checked');
else if (compose.status !== 0) problems.push(`docker-compose.yml: ${compose.stderr.trim()}`);
else console.log('deploy:check: docker-compose.yml is valid (docker-compose config)');

if (problems.length) {
  console.error(`deploy:check failed:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
