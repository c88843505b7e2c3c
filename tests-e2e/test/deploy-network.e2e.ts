import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

/**
 * Issue 16: `pnpm deploy:check` computes from the NetworkPolicies who may reach whom and compares it
 * with its edge table. Each case below changes one thing in a copy of deploy/k8s and expects the check
 * to fail naming it (or, where the change opens nothing, to pass).
 */
const ROOT = path.resolve(__dirname, '../..');
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sched-deploy-check-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

type K8sObject = { kind: string; metadata: { name: string }; spec: any };

/** deploy/k8s copied, `file` of its base rewritten by `change`, then the check run on the copy. */
function checkWith(file: string, change: (objects: K8sObject[]) => K8sObject[]): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(scratch, 'k8s-'));
  cpSync(path.join(ROOT, 'deploy/k8s'), dir, { recursive: true });
  const target = path.join(dir, 'base', file);
  const objects = parseAllDocuments(readFileSync(target, 'utf8')).map((d) => d.toJS() as K8sObject);
  writeFileSync(target, change(objects).map((o) => stringify(o)).join('---\n'));
  const r = spawnSync(process.execPath, ['scripts/validate-deploy.mjs', '--k8s', dir, '--no-compose'], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

const policies = (change: (objects: K8sObject[]) => void) => (objects: K8sObject[]) => {
  change(objects);
  return objects;
};
const policy = (objects: K8sObject[], name: string) => objects.find((o) => o.metadata.name === name)!;
const pods = (name: string) => ({ podSelector: { matchLabels: { 'app.kubernetes.io/name': name } } });

describe('deploy:check on NetworkPolicies', () => {
  it('passes on the policies as they are', () => {
    const r = checkWith('network-policies.yaml', (o) => o);
    expect(r.output).toContain('NetworkPolicies checked against the edge table');
    expect(r.status).toBe(0);
  });

  it('fails without the default-deny', () => {
    const r = checkWith('network-policies.yaml', (o) => o.filter((p) => p.metadata.name !== 'default-deny'));
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/base: no default-deny NetworkPolicy/);
  });

  it('fails when internet egress may reach the metadata address or a private range', () => {
    const r = checkWith(
      'network-policies.yaml',
      policies((o) => {
        // The webhook sends' egress (webhook-dispatch's worker; its admin API connects to nothing outside).
        const internet = policy(o, 'webhook-dispatch-worker').spec.egress[0].to[0].ipBlock;
        internet.except = internet.except.filter((e: string) => e !== '169.254.0.0/16' && e !== '10.0.0.0/8');
      }),
    );
    expect(r.status).toBe(1);
    expect(r.output).toContain('NetworkPolicy/webhook-dispatch-worker allows egress to 0.0.0.0/0 without excepting 169.254.0.0/16');
    expect(r.output).toContain('NetworkPolicy/webhook-dispatch-worker allows egress to 0.0.0.0/0 without excepting 10.0.0.0/8');
  });

  it('fails on an edge the architecture does not have once both ends allow it, and not before', () => {
    const egressOnly = policies((o) => {
      (policy(o, 'webhook-dispatch').spec.egress ??= []).push({ to: [pods('booking')], ports: [{ protocol: 'TCP', port: 8081 }] });
    });
    // The caller's egress alone opens nothing: booking's ingress still refuses webhook-dispatch.
    expect(checkWith('network-policies.yaml', egressOnly).status).toBe(0);
    const both = policies((o) => {
      egressOnly(o);
      policy(o, 'booking').spec.ingress[0].from.push(pods('webhook-dispatch'));
    });
    const r = checkWith('network-policies.yaml', both);
    expect(r.status).toBe(1);
    expect(r.output).toContain('NetworkPolicies allow an edge the architecture does not have: webhook-dispatch -> booking:8081/TCP');
  });

  it('fails when an ingress admits every namespace', () => {
    const r = checkWith(
      'network-policies.yaml',
      policies((o) => {
        policy(o, 'booking').spec.ingress[0].from.push({ namespaceSelector: {} });
      }),
    );
    expect(r.status).toBe(1);
    expect(r.output).toContain('an edge the architecture does not have: elsewhere/(other pod) -> booking:8081/TCP');
    expect(r.output).toContain('an edge the architecture does not have: ingress-nginx/controller -> booking:8081/TCP');
  });

  it('fails on a missing edge: a call the code makes that the policies refuse, or a wrong port', () => {
    const r = checkWith(
      'network-policies.yaml',
      policies((o) => {
        const invitation = policy(o, 'invitation').spec;
        invitation.egress = invitation.egress.filter((rule: any) => rule.to[0].podSelector.matchLabels['app.kubernetes.io/name'] !== 'booking');
        policy(o, 'gateway').spec.egress[1].ports[0].port = 8080; // availability listens on 8082
      }),
    );
    expect(r.status).toBe(1);
    expect(r.output).toContain('NetworkPolicies do not allow invitation -> booking:8081/TCP');
    expect(r.output).toContain('NetworkPolicies do not allow gateway -> availability:8082/TCP');
  });

  it('validates NetworkPolicy objects against the Kubernetes schema', () => {
    const r = checkWith(
      'network-policies.yaml',
      policies((o) => {
        policy(o, 'gateway').spec.podSelector = 'gateway';
      }),
    );
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/base: NetworkPolicy\/gateway: .*podSelector/);
  });

  it('fails when the gateway is probed or scraped on its public port', () => {
    const r = checkWith('gateway.yaml', (o) => {
      const gw = o.find((x) => x.kind === 'Deployment')!.spec.template;
      gw.spec.containers[0].readinessProbe.httpGet.port = 'http';
      gw.metadata.annotations['prometheus.io/port'] = '8080';
      return o;
    });
    expect(r.status).toBe(1);
    expect(r.output).toContain('base: gateway readiness is not on its ops port');
    expect(r.output).toContain('base: gateway is not scraped on its ops port');
  });
});
