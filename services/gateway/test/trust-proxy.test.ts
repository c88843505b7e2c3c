import { createTestDatabase, type TestDatabase } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, startStubUpstream, type RunningGateway } from './support/gateway-harness';

/**
 * Issue 16: behind one ingress hop (TRUST_PROXY=1, deploy/k8s/base/config.yaml) the booking page's
 * per-visitor limit counts each visitor, not the ingress controller, and a client cannot pick its
 * own address with an X-Forwarded-For of its own.
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

describe('the booking page limit behind an ingress (TRUST_PROXY)', () => {
  let slug: string;
  const post = (gw: RunningGateway, forwardedFor: string) =>
    call(gw.url, 'POST', `/book/api/public/${slug}/intro/bookings`, { json: { start_at: '2030-01-01T09:00:00Z' }, headers: { 'x-forwarded-for': forwardedFor } });

  beforeAll(async () => {
    const admin = await gateway();
    const res = await call(admin.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Proxy Hops Co' } });
    slug = res.body.data.slug;
  });

  it('with TRUST_PROXY=1 gives each client of the ingress its own bucket, and ignores addresses the client put in front', async () => {
    const gw = await gateway({ TRUST_PROXY: '1', BOOKING_PAGE_RATE_LIMIT: '2', BOOKING_PAGE_RATE_WINDOW_SECONDS: '3600' });
    // The ingress appends the address it saw: one visitor's three POSTs, the third over the limit.
    expect([(await post(gw, '203.0.113.1')).status, (await post(gw, '203.0.113.1')).status, (await post(gw, '203.0.113.1')).status]).toEqual([201, 201, 429]);
    // Another visitor is not blocked by the first.
    expect((await post(gw, '203.0.113.2')).status).toBe(201);
    // The first visitor cannot get a fresh bucket by sending an X-Forwarded-For of its own: the ingress
    // appends the real address, and only the last hop is trusted.
    expect((await post(gw, '198.51.100.7, 203.0.113.1')).status).toBe(429);
  });

  it('without it (TRUST_PROXY=0 behind a proxy) every visitor shares the one bucket of the proxy address', async () => {
    const gw = await gateway({ TRUST_PROXY: '0', BOOKING_PAGE_RATE_LIMIT: '2', BOOKING_PAGE_RATE_WINDOW_SECONDS: '3600' });
    const statuses = [];
    for (const client of ['203.0.113.11', '203.0.113.12', '203.0.113.13']) statuses.push((await post(gw, client)).status);
    expect(statuses).toEqual([201, 201, 429]);
  });
});
