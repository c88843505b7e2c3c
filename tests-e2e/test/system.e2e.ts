import { spawnSync } from 'node:child_process';
import { getPriority } from 'node:os';
import { BACKGROUND_SERVICES, ROOT, startSystem, type System } from '../support/system';

let sys: System;

beforeAll(async () => {
  sys = await startSystem();
}, 180000);

afterAll(async () => {
  await sys?.stop();
});

describe('the whole system as separate processes', () => {
  it('runs six services, each healthy and ready with its Postgres and RabbitMQ', async () => {
    expect(new Set(sys.processes.map((p) => p.service)).size).toBe(6);
    for (const p of sys.processes) {
      expect((await fetch(`${p.url}/healthz`)).status).toBe(200);
      const ready = (await (await fetch(`${p.opsUrl}/readyz`)).json()) as { data: { status: string; checks: Record<string, string> } };
      expect(ready.data.status).toBe('ready');
      expect(ready.data.checks.postgres).toBe('ok');
      if (p.service !== 'gateway') expect(ready.data.checks.rabbitmq).toBe('ok');
      // The gateway's public port serves neither /readyz nor /metrics: its operations port does.
      if (p.service === 'gateway') {
        expect(p.opsUrl).not.toBe(p.url);
        for (const path of ['/readyz', '/metrics']) expect((await fetch(`${p.url}${path}`)).status).toBe(404);
        expect((await fetch(`${p.opsUrl}/metrics`)).status).toBe(200);
      }
    }
  });

  it('runs the background services and Radicale at the lower CPU priority npm start gives them, the API at the normal one', async () => {
    // The harness and `npm start` (scripts/lib/services.mjs) name the same services and the same value.
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./scripts/lib/services.mjs'); console.log(JSON.stringify({ services: m.BACKGROUND_SERVICES, nice: m.backgroundCpuNice(process.env) }))"], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ services: [...BACKGROUND_SERVICES], nice: sys.backgroundNice });
    expect(BACKGROUND_SERVICES).toEqual(['calendar-sync', 'webhook-dispatch']);

    // Only ever lowered: each process starts at this one's nice value.
    const own = getPriority();
    for (const p of sys.processes) {
      const expected = BACKGROUND_SERVICES.includes(p.service) ? Math.max(sys.backgroundNice, own) : own;
      expect({ service: p.service, nice: getPriority(p.child.pid!) }).toEqual({ service: p.service, nice: expected });
      expect(p.lines.find((l) => l.message === `${p.service} listening`)).toMatchObject({ cpu_nice: expected });
    }
    expect(getPriority(sys.radicale.pid()!)).toBe(Math.max(sys.backgroundNice, own));
  });

  it('lets an operator make a workspace and a key, and that key call /v1 through the gateway', async () => {
    const admin = { authorization: `Bearer ${sys.adminToken}`, 'content-type': 'application/json' };
    const ws = await (await fetch(`${sys.gatewayUrl}/admin/v1/workspaces`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'E2E' }) })).json() as any;
    const key = await (
      await fetch(`${sys.gatewayUrl}/admin/v1/workspaces/${ws.data.id}/api-keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'e2e', scopes: ['bookings:read'] }) })
    ).json() as any;
    expect(key.data.key).toMatch(/^sk_live_/);
    expect((await fetch(`${sys.gatewayUrl}/v1/bookings/bkg_unknown`)).status).toBe(401);
    const res = await fetch(`${sys.gatewayUrl}/v1/bookings/bkg_unknown`, { headers: { authorization: `Bearer ${key.data.key}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe('not_found');
  });

  it('stops every process cleanly on SIGTERM', async () => {
    const extra = await sys.addReplica('booking');
    extra.child.kill('SIGTERM');
    expect(await extra.exited).toBe(0);
  });
});
