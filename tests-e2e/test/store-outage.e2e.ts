import { credentialFor, waitFor } from '@sched/testing';
import { startPrivatePostgres, type PrivateServer } from '../support/private-infra';
import type { ServiceName } from '@sched/db';
import { startSystem, type ServiceProcess, type System } from '../support/system';
import { setUpTenant, type Tenant } from '../support/tenant';

/**
 * issue 15: while Postgres is unreachable every API answer is `503 service_unavailable` with Retry-After
 * and the error envelope (decisions.md §2), never `500 internal_error`, and every /readyz names postgres
 * as failed. The whole system runs as separate processes (the bundles npm start runs) on a private
 * PostgreSQL cluster (support/private-infra.ts), which this test stops; the machine's shared Postgres is
 * never touched. RabbitMQ is the shared test broker: only Postgres goes away here.
 */

let pg: PrivateServer;
let sys: System;
let t: Tenant;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  process.env.TEST_DATABASE_URL = pg.url;
  sys = await startSystem();
  t = await setUpTenant(sys, { url: 'http://127.0.0.1:9/hooks', secret: { value: '' } });
}, 180_000);

afterAll(async () => {
  // The database is dropped by sys.stop(): Postgres must be back for that.
  await pg?.start().catch(() => undefined);
  await sys?.stop();
  await pg?.close();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  requestId: string | null;
  body: any;
  text: string;
}

async function call(base: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), requestId: res.headers.get('x-request-id'), body, text };
}

/** The service's API process (where its routes answer). */
const proc = (service: string): ServiceProcess => sys.api(service as ServiceName);
/** Well-formed ids nothing has: with the database gone, a lookup of any id fails the same way. */
const id = (prefix: string) => `${prefix}_AAAAAAAAAAAAAAAAAAAAAA`;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** The API routes of each service, called on the service itself with the context the gateway forwards. */
function directCalls(): Array<{ service: string; method: string; path: string; body?: unknown }> {
  const ws = t.workspaceId;
  const admin = `/admin/v1/workspaces/${ws}`;
  const start = `${day(2)}T10:00:00.000Z`;
  return [
    { service: 'availability', method: 'GET', path: '/v1/event-types' },
    { service: 'availability', method: 'GET', path: `/v1/event-types/${t.eventTypeId}` },
    { service: 'availability', method: 'GET', path: `/v1/event-types/${t.eventTypeId}/slots?from=${day(1)}&to=${day(2)}&timezone=UTC` },
    { service: 'availability', method: 'GET', path: `${admin}/hosts` },
    { service: 'availability', method: 'PATCH', path: `${admin}/hosts/${t.hostId}`, body: { name: 'Renamed' } },
    { service: 'availability', method: 'POST', path: `/internal/v1/workspaces/${ws}/slot-check`, body: { event_type_id: t.eventTypeId, start_at: start } },
    { service: 'availability', method: 'POST', path: `/internal/v1/workspaces/${ws}/slot-checks`, body: { checks: [{ event_type_id: t.eventTypeId, start_at: start }] } },
    { service: 'booking', method: 'GET', path: '/v1/bookings' },
    { service: 'booking', method: 'GET', path: `/v1/bookings/${id('bkg')}` },
    { service: 'booking', method: 'POST', path: '/v1/bookings', body: { event_type_id: t.eventTypeId, start_at: start, guest: { name: 'Gail', email: 'gail@example.com', timezone: 'UTC' } } },
    { service: 'booking', method: 'POST', path: `/v1/bookings/${id('bkg')}/cancel`, body: {} },
    { service: 'invitation', method: 'GET', path: '/v1/booking-invitations' },
    { service: 'invitation', method: 'GET', path: `/v1/booking-invitations/${id('inv')}` },
    { service: 'invitation', method: 'POST', path: '/v1/booking-invitations', body: { event_type_id: t.eventTypeId, expires_at: `${day(3)}T00:00:00.000Z`, max_uses: 1 } },
    { service: 'calendar-sync', method: 'GET', path: `${admin}/hosts/${t.hostId}/calendar` },
    { service: 'calendar-sync', method: 'DELETE', path: `${admin}/hosts/${t.hostId}/calendar` },
    { service: 'calendar-sync', method: 'POST', path: `${admin}/bookings/${id('bkg')}/calendar-resync` },
    { service: 'webhook-dispatch', method: 'GET', path: `${admin}/webhook-endpoints` },
    { service: 'webhook-dispatch', method: 'GET', path: `${admin}/webhook-endpoints/${id('whe')}` },
    { service: 'webhook-dispatch', method: 'GET', path: `${admin}/webhook-deliveries` },
  ];
}

function expectServiceUnavailable(what: string, a: Answer): void {
  expect([what, a.status, a.body?.error?.code]).toEqual([what, 503, 'service_unavailable']);
  expect([what, a.retryAfter]).toEqual([what, expect.stringMatching(/^[1-9][0-9]*$/)]);
  expect([what, a.body]).toEqual([what, { error: { code: 'service_unavailable', message: expect.any(String), details: [] }, meta: { request_id: a.requestId } }]);
  expect([what, /ECONNREFUSED|127\.0\.0\.1|postgres|SELECT|\n\s+at /i.test(a.text)]).toEqual([what, false]);
}

describe('Postgres unreachable', () => {
  it('every API route of every service answers 503 service_unavailable with Retry-After, never 500; /readyz names postgres; all recover', async () => {
    const gw = sys.gatewayUrl;
    const bearer = { authorization: `Bearer ${t.apiKey}` };
    const adminAuth = { authorization: `Bearer ${sys.adminToken}` };
    // The key is now in the gateway's cache (at most 5 s): the next call authenticates without the database.
    expect((await call(gw, 'GET', '/v1/bookings', { headers: bearer })).status).toBe(200);

    const stoppedAt = Date.now();
    await pg.stop();

    // Gateway → booking with a cached key: booking's own 503 passes through with its Retry-After.
    const forwarded = await call(gw, 'GET', '/v1/bookings', { headers: bearer });
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    expectServiceUnavailable('gateway → booking (cached key)', forwarded);
    await waitFor(() => proc('booking').lines.some((l) => l.request_id === forwarded.requestId && l.message === 'store unavailable; answered 503'), { timeoutMs: 2000, intervalMs: 50 });

    const answers: Array<[string, Answer]> = [];
    // Every service's API routes, called directly with the credential their real caller sends.
    for (const c of directCalls()) {
      const credential = await credentialFor(c.service, c.path, { workspaceId: t.workspaceId, invitationId: (c.body as { invitation_id?: string } | undefined)?.invitation_id });
      answers.push([`${c.service} ${c.method} ${c.path}`, await call(proc(c.service).url, c.method, c.path, { headers: credential, body: c.body })]);
    }
    // The gateway's own store: keys it has not cached, the admin API, the booking page's workspace lookup.
    const unknownKey = { authorization: `Bearer sk_live_${'Q'.repeat(32)}` };
    answers.push(['gateway GET /v1/event-types (key not cached)', await call(gw, 'GET', '/v1/event-types', { headers: unknownKey })]);
    answers.push(['gateway POST /v1/bookings (key not cached)', await call(gw, 'POST', '/v1/bookings', { headers: unknownKey, body: { event_type_id: t.eventTypeId } })]);
    answers.push(['gateway POST /admin/v1/workspaces', await call(gw, 'POST', '/admin/v1/workspaces', { headers: adminAuth, body: { name: 'Down Co' } })]);
    answers.push(['gateway GET /admin/v1/workspaces/:ws/api-keys', await call(gw, 'GET', `/admin/v1/workspaces/${t.workspaceId}/api-keys`, { headers: adminAuth })]);
    answers.push(['gateway GET /admin/v1/workspaces/:ws/hosts (forwarded)', await call(gw, 'GET', `/admin/v1/workspaces/${t.workspaceId}/hosts`, { headers: adminAuth })]);
    answers.push(['gateway GET /book/api/public/:workspace/:eventType', await call(gw, 'GET', '/book/api/public/e2e-co/demo-call')]);

    expect(answers.filter(([, a]) => a.status === 500).map(([what]) => what)).toEqual([]);
    for (const [what, a] of answers) expectServiceUnavailable(what, a);

    // /readyz of every process names postgres as the dependency that is down.
    for (const p of sys.processes) {
      const ready = await call(p.opsUrl, 'GET', '/readyz');
      expect([p.service, ready.status, ready.body.data.status, ready.body.data.checks.postgres]).toEqual([p.service, 503, 'not_ready', 'failed']);
      expect([p.service, ready.body.data.failed]).toEqual([p.service, ['postgres']]);
    }

    // Expected outages are warnings without a stack; no request was logged as an unhandled error.
    const lines = sys.processes.flatMap((p) => p.lines.map((l): Record<string, unknown> => ({ service: p.service, ...l })));
    expect(lines.filter((l) => l.message === 'unhandled error')).toEqual([]);
    const warned = lines.filter((l) => l.message === 'store unavailable; answered 503');
    expect(new Set(warned.map((l) => l.service))).toEqual(new Set(sys.processes.map((p) => p.service)));
    expect(warned.filter((l) => l.level !== 'warn' || JSON.stringify(l).includes('\n    at '))).toEqual([]);

    // Back: every service is ready again and answers by itself (the pools reconnect).
    await pg.start();
    for (const p of sys.processes) await waitFor(async () => (await call(p.opsUrl, 'GET', '/readyz')).status === 200, { timeoutMs: 30_000, intervalMs: 200 });
    expect((await call(gw, 'GET', '/v1/bookings', { headers: bearer })).status).toBe(200);
    expect((await call(gw, 'GET', `/admin/v1/workspaces/${t.workspaceId}/hosts`, { headers: adminAuth })).status).toBe(200);
  });
});
