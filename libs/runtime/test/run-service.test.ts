import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { parseConfig, serviceEnv } from '@sched/config';
import { calledBy, sendData } from '@sched/http';
import { createLogger } from '@sched/logger';
import { createTestDatabase, internalAuthorization, TEST_INTERNAL_AUTH_KEYS, testAmqp, waitFor, type TestDatabase } from '@sched/testing';
import { runService, type ProcessParts } from '../src';

const root = join(__dirname, '..', '..', '..');

/** The nice value of each thread of a process (Linux: field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
}

function startFixture(env: Record<string, string>): { child: ChildProcess; lines: Record<string, unknown>[]; stderr: () => string; port: Promise<number> } {
  // `node --import tsx` rather than the tsx wrapper, so signals reach the service process itself.
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures/slow-service.ts')], {
    cwd: root,
    env: { ...process.env, INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '5000', ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines: Record<string, unknown>[] = [];
  const port = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      try {
        const obj = JSON.parse(l) as Record<string, unknown>;
        lines.push(obj);
        if (obj.message === 'http listening') resolve(Number(obj.port));
      } catch {
        /* not JSON */
      }
    });
    child.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
  });
  return { child, lines, stderr: () => stderr, port };
}

describe('a service process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ services: ['booking'] });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('answers /healthz and /readyz (Postgres and RabbitMQ), then on SIGTERM finishes the request in flight and exits 0', async () => {
    const amqp = testAmqp();
    const { child, lines, port } = startFixture({ DATABASE_URL: db.urlFor('booking'), AMQP_URL: amqp.url, AMQP_PREFIX: amqp.prefix });
    const base = `http://127.0.0.1:${await port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await waitFor(async () => {
      const r = await fetch(`${base}/readyz`);
      return r.status === 200 ? ((await r.json()) as { data: { checks: Record<string, string> } }) : null;
    }, { timeoutMs: 10000 });
    expect(ready.data.checks).toEqual({ postgres: 'ok', rabbitmq: 'ok' });
    expect((await fetch(`${base}/metrics`)).headers.get('content-type')).toMatch(/text\/plain/);

    // Without the gateway's credential the route is refused; with it, it runs.
    expect((await fetch(`${base}/slow`)).status).toBe(401);
    const inFlight = fetch(`${base}/slow`, { headers: await internalAuthorization('fixture', { principal: 'service' }) });
    await waitFor(() => lines.some((l) => l.message === 'slow request started'));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ data: { done: true } });
    expect(await exited).toBe(0);
    const stopped = lines.find((l) => l.message === 'stopped all');
    expect(stopped).toMatchObject({ ok: true, reason: 'SIGTERM' });
  }, 30000);

  it('runs every thread at its CPU_NICE, and says so in its start line', async () => {
    const amqp = testAmqp();
    const { child, lines, port } = startFixture({ DATABASE_URL: db.urlFor('booking'), AMQP_URL: amqp.url, AMQP_PREFIX: amqp.prefix, CPU_NICE: '5' });
    try {
      await port;
      const started = await waitFor(() => lines.find((l) => l.message === 'fixture listening'), { timeoutMs: 10000 });
      // The fixture inherits this process's nice value; CPU_NICE only ever lowers the priority.
      const expected = Math.max(5, getPriority());
      expect(started).toMatchObject({ cpu_nice: expected });
      expect(getPriority(child.pid!)).toBe(expected);
      // V8's and libuv's threads too, not only the main one.
      if (existsSync(`/proc/${child.pid}/task`)) {
        const nices = threadNices(child.pid!);
        expect(nices.length).toBeGreaterThan(1);
        expect(new Set(nices)).toEqual(new Set([expected]));
      }
    } finally {
      child.kill('SIGKILL');
    }
  }, 30000);

  it('refuses to start with a CPU_NICE outside 0..19, naming it', async () => {
    const { child, lines, stderr, port } = startFixture({ DATABASE_URL: db.urlFor('booking'), CPU_NICE: '20' });
    port.catch(() => undefined); // it never listens
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(stderr()).toContain('CPU_NICE: must be an integer from 0 (normal priority) to 19 (the lowest)');
    expect(lines.some((l) => l.message === 'fixture listening')).toBe(false);
  }, 30000);

  it('reports not ready while its database is unreachable', async () => {
    const amqp = testAmqp();
    const { child, port } = startFixture({ DATABASE_URL: 'postgres://svc_booking@127.0.0.1:1/nowhere', AMQP_URL: amqp.url, AMQP_PREFIX: amqp.prefix });
    try {
      const base = `http://127.0.0.1:${await port}`;
      // The broker connects in the background; once it has, only Postgres is left failing.
      const body = await waitFor(async () => {
        const res = await fetch(`${base}/readyz`);
        const json = (await res.json()) as { data: { checks: Record<string, string>; failed: string[] } };
        return json.data.checks.rabbitmq === 'ok' ? { status: res.status, ...json } : null;
      }, { timeoutMs: 10000 });
      expect(body.status).toBe(503);
      expect(body.data.failed).toEqual(['postgres']);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30000);
});

describe('PROCESS_ROLE: the parts one process runs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ services: ['booking'] });
  });
  afterAll(async () => {
    await db.drop();
  });

  const logs: string[] = [];
  /** A service in this process, as a setup sees it: routes only under runs.api, as every app.ts does. */
  async function start(env: Record<string, string>, opts: { brokerCritical?: boolean; background?: boolean; routeAlways?: boolean } = {}) {
    const config = parseConfig(serviceEnv('fixture', 0), { INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, DATABASE_URL: db.urlFor('booking'), SHUTDOWN_TIMEOUT_MS: '2000', ...env });
    const stream = new PassThrough();
    stream.on('data', (c: Buffer) => logs.push(c.toString()));
    let seen: ProcessParts | undefined;
    const service = await runService({
      name: 'fixture',
      config,
      brokerCritical: opts.brokerCritical ?? false,
      access: { 'GET /answer': calledBy(['gateway']) },
      handleSignals: false,
      logger: createLogger({ service: 'fixture', stream, level: 'info' }),
      ...(opts.background === undefined ? {} : { background: opts.background }),
      setup: (ctx) => {
        seen = ctx.runs;
        if (ctx.runs.api || opts.routeAlways) ctx.http.route('GET', '/answer', (_req, res) => sendData(res, 200, { answered: true }));
      },
    });
    const base = `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`;
    return { service, base, runs: seen! };
  }
  const answer = async (base: string) => (await fetch(`${base}/answer`, { headers: await internalAuthorization('fixture', { principal: 'service' }) })).status;
  const readyz = async (base: string) => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, ...((await res.json()) as { data: { checks: Record<string, string>; failed?: string[] } }) };
  };

  it('all (the default) and api answer the routes; a worker serves /healthz, /readyz and /metrics and no route', async () => {
    const amqp = testAmqp();
    const env = { AMQP_URL: amqp.url, AMQP_PREFIX: amqp.prefix };
    for (const [role, parts, status] of [
      [undefined, { role: 'all', api: true, background: true }, 200],
      ['api', { role: 'api', api: true, background: false }, 200],
      ['worker', { role: 'worker', api: false, background: true }, 404],
    ] as const) {
      const { service, base, runs } = await start(role ? { ...env, PROCESS_ROLE: role } : env);
      try {
        expect(runs).toEqual(parts);
        expect([role, await answer(base)]).toEqual([role, status]);
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        expect((await fetch(`${base}/metrics`)).status).toBe(200);
        await waitFor(async () => (await readyz(base)).status === 200, { timeoutMs: 10000 });
        expect(logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message === 'fixture listening').pop()).toMatchObject({ role: parts.role });
      } finally {
        await service.stop('test done');
      }
    }
  }, 30000);

  it('refuses to start a worker whose setup registers a route: a worker has no route to serve', async () => {
    await expect(start({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', PROCESS_ROLE: 'worker' }, { routeAlways: true })).rejects.toThrow('route GET /answer has no access rule');
  }, 30000);

  it('makes a worker broker-critical; an api keeps the service\'s own rule', async () => {
    const unreachable = { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' };
    const worker = await start({ ...unreachable, PROCESS_ROLE: 'worker' }, { brokerCritical: false });
    const api = await start({ ...unreachable, PROCESS_ROLE: 'api' }, { brokerCritical: false });
    try {
      const w = await readyz(worker.base);
      expect([w.status, w.data.failed]).toEqual([503, ['rabbitmq']]);
      const a = await readyz(api.base);
      expect(a.status).toBe(200);
      expect(a.data.checks.rabbitmq).not.toBe('ok');
    } finally {
      await worker.service.stop('test done');
      await api.service.stop('test done');
    }
  }, 30000);

  it('refuses worker for a service without a background part (the gateway), naming it', async () => {
    await expect(start({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', PROCESS_ROLE: 'worker' }, { background: false })).rejects.toThrow(
      'fixture has no background part: PROCESS_ROLE must be all or api, not worker',
    );
    const { service, runs } = await start({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', PROCESS_ROLE: 'api' }, { background: false });
    expect(runs.api).toBe(true);
    await service.stop('test done');
  }, 30000);
});
