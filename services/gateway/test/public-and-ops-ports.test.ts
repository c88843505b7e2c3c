import { createTestDatabase, TEST_INTERNAL_AUTH_KEYS, type TestDatabase } from '@sched/testing';
import { opsPortOf, readConfig } from '../src/config';
import { ADMIN_TOKEN, call, startGateway, startStubUpstream, type RunningGateway } from './support/gateway-harness';

/**
 * Issue 16, "The network says the same": the public port answers only /v1, /admin/v1, /book and
 * /healthz; probes and the scrape use the ops port.
 */
let db: TestDatabase;
let stub: Awaited<ReturnType<typeof startStubUpstream>>;
const gateways: RunningGateway[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  stub = await startStubUpstream();
});

afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await stub.close();
  await db.drop();
});

async function gateway(env: Record<string, string> = {}): Promise<RunningGateway> {
  const gw = await startGateway(db, stub.url, env);
  gateways.push(gw);
  return gw;
}

describe('the public port and the ops port', () => {
  let gw: RunningGateway;
  let ops: string;

  beforeAll(async () => {
    gw = await gateway();
    ops = gw.opsUrl;
  });

  it('answers /metrics and /readyz on the public port with 404 and the error envelope', async () => {
    for (const path of ['/metrics', '/readyz', '/readyz?verbose=1', '/metrics/']) {
      const res = await call(gw.url, 'GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body.error.code).toBe('not_found');
      expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    }
  });

  it('serves only /v1, /admin/v1, /book and /healthz publicly', async () => {
    expect((await call(gw.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(gw.url, 'GET', '/v1/openapi.json')).status).toBe(200);
    expect((await call(gw.url, 'GET', '/v1/bookings')).status).toBe(401);
    expect((await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Public Surface Co' } })).status).toBe(201);
    expect((await call(gw.url, 'GET', '/book/assets/booking-page.css')).status).toBe(200);
    for (const path of ['/', '/internal/v1/page/invitation', '/v2/bookings', '/debug/vars', '/status']) {
      const res = await call(gw.url, 'GET', path);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
  });

  it('answers /healthz, /readyz and /metrics on the ops port, and nothing of the API there', async () => {
    expect((await call(ops, 'GET', '/healthz')).body.data).toEqual({ status: 'ok' });
    const ready = await call(ops, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.data.status).toBe('ready');
    // It owns no queue (runService broker: false): readiness is its own database only.
    expect(ready.body.data.checks).toEqual({ postgres: 'ok' });
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('http_requests_total');
    expect(text).toContain('service="gateway"');
    for (const path of ['/v1/openapi.json', '/admin/v1/workspaces', '/book/assets/booking-page.css']) {
      const res = await fetch(`${ops}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });

  it('takes the ops port from OPS_PORT, else PORT + 1000', () => {
    const base = { ADMIN_TOKEN, INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS };
    expect(opsPortOf(readConfig(base))).toBe(9080);
    expect(opsPortOf(readConfig({ ...base, PORT: '18080' }))).toBe(19080);
    expect(opsPortOf(readConfig({ ...base, PORT: '18080', OPS_PORT: '9999' }))).toBe(9999);
    expect(opsPortOf(readConfig({ ...base, PORT: '0' }))).toBe(0);
    expect(() => opsPortOf(readConfig({ ...base, PORT: '65000' }))).toThrow(/set OPS_PORT/);
  });
});
