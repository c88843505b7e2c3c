import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { getPriority } from 'node:os';
import { credentialFor } from '@sched/testing';
import { ROOT, SERVICE_NODE_ARGS, startSystem, WORKER_SERVICES, type System } from '../support/system';

let sys: System;

beforeAll(async () => {
  sys = await startSystem();
}, 180000);

afterAll(async () => {
  await sys?.stop();
});

describe('the whole system as separate processes', () => {
  it('runs six services, each with background work as an API and a worker process, each healthy and ready with its Postgres and RabbitMQ', async () => {
    expect(new Set(sys.processes.map((p) => p.service)).size).toBe(6);
    expect(sys.processes.map((p) => `${p.name} ${p.role}`).sort()).toEqual(
      [...['availability', 'booking', 'invitation', 'calendar-sync', 'webhook-dispatch'].flatMap((s) => [`${s} api`, `${s}-worker worker`]), 'gateway all'].sort(),
    );
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

  it('runs the workers and Radicale at the lower CPU priority npm start gives them, every API at the normal one', async () => {
    // The harness and `npm start` (scripts/lib/services.mjs) split the same services, with the same value.
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('./scripts/lib/services.mjs'); console.log(JSON.stringify({ services: m.WORKER_SERVICES, nice: m.backgroundCpuNice(process.env), plan: m.processPlan(process.env).map((p) => `${p.name} ${p.role}`).sort() }))"],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ services: [...WORKER_SERVICES], nice: sys.backgroundNice, plan: sys.processes.map((p) => `${p.name} ${p.role}`).sort() });

    // Only ever lowered: each process starts at this one's nice value.
    const own = getPriority();
    for (const p of sys.processes) {
      const expected = p.role === 'worker' ? Math.max(sys.backgroundNice, own) : own;
      expect({ process: p.name, nice: getPriority(p.child.pid!) }).toEqual({ process: p.name, nice: expected });
      expect(p.lines.find((l) => l.message === `${p.service} listening`)).toMatchObject({ cpu_nice: expected, role: p.role });
    }
    expect(getPriority(sys.radicale.pid()!)).toBe(Math.max(sys.backgroundNice, own));
  });

  it('runs every process without --enable-source-maps, the map beside its bundle, and maps a logged frame back to the source', async () => {
    // On Node 20 the flag makes every formatted stack trace parse the bundle's whole map again (about 11 ms
    // of CPU each with these bundles), and undici and node's streams format one whenever a connection
    // closes with an error. `npm start` (scripts/lib/services.mjs) and the harness pass the same flags.
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./scripts/lib/services.mjs'); console.log(JSON.stringify(m.SERVICE_NODE_ARGS))"], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([...SERVICE_NODE_ARGS]);
    expect(SERVICE_NODE_ARGS).not.toContain('--enable-source-maps');
    for (const p of sys.processes) {
      const argv = readFileSync(`/proc/${p.child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const environ = readFileSync(`/proc/${p.child.pid}/environ`, 'utf8').split('\0');
      expect({ process: p.name, argv: argv.slice(1) }).toEqual({ process: p.name, argv: [...SERVICE_NODE_ARGS, path.join(ROOT, 'services', p.service, 'dist/main.js')] });
      expect(environ.filter((e) => e.startsWith('NODE_OPTIONS='))).toEqual([]);
    }

    // The bundle names its map; scripts/map-stack.mjs turns a frame of it, as a production log prints it, into the source position.
    const bundle = path.join(ROOT, 'services/gateway/dist/main.js');
    const text = readFileSync(bundle, 'utf8');
    expect(text.trimEnd().endsWith('//# sourceMappingURL=main.js.map')).toBe(true);
    expect(existsSync(`${bundle}.map`)).toBe(true);
    const line = text.split('\n').findIndex((l) => l.startsWith('function windowStart(')) + 1;
    expect(line).toBeGreaterThan(0);
    const logged = JSON.stringify({ level: 'error', message: 'unhandled error', stack: `Error: boom\n    at windowStart (/app/services/gateway/dist/main.js:${line}:1)\n    at node:internal/x:1:1` });
    const mapped = spawnSync(process.execPath, ['scripts/map-stack.mjs'], { cwd: ROOT, input: `${logged}\n`, encoding: 'utf8' });
    expect(mapped.stderr).toBe('');
    expect(mapped.stdout).toBe('unhandled error\nError: boom\n    at windowStart (services/gateway/src/domain/rate-limit.ts:15:8)\n    at node:internal/x:1:1\n');
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
    const replica = sys.processes.filter((p) => p.service === 'booking' && p.replica === extra.replica);
    expect(replica.map((p) => p.role)).toEqual(['api', 'worker']);
    replica.forEach((p) => p.child.kill('SIGTERM'));
    expect(await Promise.all(replica.map((p) => p.exited))).toEqual([0, 0]);
  });

  it('serves no API route on a worker: its port answers /healthz, /readyz and /metrics only', async () => {
    const worker = sys.processes.find((p) => p.name === 'booking-worker')!;
    const api = sys.api('booking');
    for (const path of ['/healthz', '/readyz', '/metrics']) expect([path, (await fetch(`${worker.url}${path}`)).status]).toEqual([path, 200]);
    // With the credential the gateway forwards: the API lists, the worker has no such route.
    const headers = await credentialFor('booking', '/v1/bookings', { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA' });
    expect((await fetch(`${api.url}/v1/bookings`, { headers })).status).toBe(200);
    expect((await fetch(`${worker.url}/v1/bookings`, { headers })).status).toBe(404);
  });
});
