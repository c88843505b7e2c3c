import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { createTestDatabase, internalAuthorization, TEST_INTERNAL_AUTH_KEYS, testAmqp, waitFor, type TestDatabase } from '@sched/testing';

const root = join(__dirname, '..', '..', '..');


function startFixture(env: Record<string, string>): { child: ChildProcess; lines: Record<string, unknown>[]; port: Promise<number> } {
  // `node --import tsx` rather than the tsx wrapper, so signals reach the service process itself.
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures/slow-service.ts')], {
    cwd: root,
    env: { ...process.env, INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  return { child, lines, port };
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
