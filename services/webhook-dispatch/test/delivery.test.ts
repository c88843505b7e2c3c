import { Webhook } from 'standardwebhooks';
import { newId, webhookBodySchema } from '@sched/contracts';
import { createTestDatabase, makeBooking, testAmqp, waitFor, waitForEventsHandled, type TestAmqp, type TestDatabase } from '@sched/testing';
import {
  call,
  cleanupBroker,
  createEndpoint,
  deliveriesOf,
  FAST_POLL,
  startDispatch,
  startPublisher,
  receiverPool,
  workerIdle,
  type DispatchUnderTest,
  type Publisher,
} from './support/dispatch-harness';

let db: TestDatabase;
let amqp: TestAmqp;
let svc: DispatchUnderTest;
let pub: Publisher;
const receivers = receiverPool();
const receiver = receivers.start;


beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  amqp = testAmqp();
  svc = await startDispatch(db, amqp, {
    ...FAST_POLL,
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_PER_ENDPOINT_CONCURRENCY: '2',
    WEBHOOK_MAX_IN_FLIGHT: '8',
  });
  pub = await startPublisher(amqp);
});

afterAll(async () => {
  await svc?.stop();
  await pub?.close();
  await receivers.closeAll();
  await cleanupBroker(amqp);
  await db?.drop();
});

describe('delivering an event', () => {
  it('sends booking.created signed per Standard Webhooks: the standard verifier accepts it, the body is toWebhookBody', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    const { secret } = await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const event = await pub.publish('booking.created', ws);

    const got = await waitFor(() => rec.requests[0], { timeoutMs: 10000 });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(event.id);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const verified = new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    // Exactly the contract's body: same id, created_at = occurred_at, data.internal dropped.
    expect(verified).toEqual({ id: event.id, type: 'booking.created', created_at: event.occurred_at, workspace_id: ws, data: { booking: event.data.booking } });
    expect(webhookBodySchema.safeParse(verified).success).toBe(true);
    expect(got.body).not.toContain('internal');
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers as Record<string, string>)).toThrow();

    const [delivery] = await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws);
      return list[0]?.status === 'succeeded' ? list : null;
    });
    expect(delivery).toMatchObject({ event_id: event.id, event_type: 'booking.created', attempt_count: 1, next_attempt_at: null, failed_at: null });
    expect(delivery.attempts).toEqual([
      { number: 1, attempted_at: expect.any(String), status_code: 200, latency_ms: expect.any(Number), error_kind: null, error: null },
    ]);
  });

  it('retries with the same webhook-id and body: a receiver failing 3 times then answering 200 gets exactly 4 attempts', async () => {
    const ws = newId('wsp');
    const rec = await receiver((n) => ({ status: n <= 3 ? 500 : 200 }));
    const { secret } = await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const event = await pub.publish('booking.created', ws);

    await waitFor(async () => (await deliveriesOf(svc.url, ws))[0]?.status === 'succeeded', { timeoutMs: 10000 });
    await workerIdle(svc, svc.logs.length); // a wrong fifth attempt would have been sent by then
    expect(rec.requests.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(rec.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));
    expect(new Set(rec.requests.map((r) => r.body)).size).toBe(1);
    for (const r of rec.requests) expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    const [delivery] = await deliveriesOf(svc.url, ws);
    expect(delivery.attempt_count).toBe(4);
    expect(delivery.attempts.map((a: any) => [a.number, a.status_code, a.error_kind])).toEqual([
      [1, 500, 'http_status'],
      [2, 500, 'http_status'],
      [3, 500, 'http_status'],
      [4, 200, null],
    ]);
  });

  it('stops after 8 attempts: the delivery is failed and listed with ?status=failed', async () => {
    const ws = newId('wsp');
    const rec = await receiver(() => ({ status: 502 }));
    const { id } = await createEndpoint(svc.url, ws, rec.url, ['booking.cancelled']);
    await pub.publish('booking.cancelled', ws);
    const [failed] = await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws, `?status=failed&endpoint_id=${id}`);
      return list.length === 1 ? list : null;
    }, { timeoutMs: 10000 });
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 8, next_attempt_at: null, last_error: 'HTTP 502', failed_at: expect.any(String) });
    await workerIdle(svc, svc.logs.length); // a wrong ninth attempt would have been sent by then
    expect(rec.requests).toHaveLength(8);
    expect(await deliveriesOf(svc.url, ws, '?status=pending')).toEqual([]);
  });

  it('records a receiver that does not answer in time as a timeout and tries again', async () => {
    const ws = newId('wsp');
    const rec = await receiver((n) => (n === 1 ? { status: 200, delayMs: 3000 } : { status: 200 }));
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    await pub.publish('booking.created', ws);
    const [delivery] = await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws);
      return list[0]?.status === 'succeeded' ? list : null;
    }, { timeoutMs: 10000 });
    expect(delivery.attempts.map((a: any) => [a.status_code, a.error_kind])).toEqual([
      [null, 'timeout'],
      [200, null],
    ]);
    expect(delivery.attempts[0].latency_ms).toBeGreaterThanOrEqual(1400);
  });

  it('honours Retry-After of a 503 as the next delay instead of the 50 ms schedule', async () => {
    const ws = newId('wsp');
    const rec = await receiver((n) => (n === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 }));
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    await pub.publish('booking.created', ws);
    await waitFor(() => rec.requests.length === 2, { timeoutMs: 10000 });
    const gap = rec.requests[1]!.at - rec.requests[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(1900);
  });

  it('disables the endpoint when the receiver answers 410 Gone, stopping its other pending deliveries', async () => {
    const ws = newId('wsp');
    // Two are in flight at once (cap 2). The 410 comes after 300 ms, when all six deliveries exist, and
    // before the other attempt in flight answers (1 s), so no third one starts.
    const rec = await receiver((n) => (n === 1 ? { status: 410, delayMs: 300 } : { status: 200, delayMs: 1000 }));
    const { id } = await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    for (let i = 0; i < 6; i++) await pub.publish('booking.created', ws);
    const list = await waitFor(async () => {
      const all = await deliveriesOf(svc.url, ws);
      // Done once nothing is pending and the attempt in flight at the 410 has answered.
      return all.length === 6 && all.every((d) => d.status !== 'pending') && all.some((d) => d.status === 'succeeded') ? all : null;
    }, { timeoutMs: 10000 });

    const endpoint = await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/webhook-endpoints/${id}`, { ws });
    expect(endpoint.body.data).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    expect(rec.requests).toHaveLength(2);
    const outcome = list.map((d) => `${d.status}:${d.last_error}`).sort();
    // The 410, the attempt already in flight (its success is recorded), and four stopped unsent.
    expect(outcome).toEqual(['failed:HTTP 410', ...Array(4).fill('failed:endpoint_disabled'), 'succeeded:null']);

    const from = svc.logs.length;
    const late = await pub.publish('booking.created', ws); // a new event finds no enabled endpoint
    await waitForEventsHandled(svc.logs, [late.id], { from });
    await workerIdle(svc, from);
    expect(rec.requests).toHaveLength(2);
    expect(await deliveriesOf(svc.url, ws)).toHaveLength(6);
  });
});

describe('who gets what', () => {
  it('sends an endpoint only the kinds it subscribed to, and nothing to another workspace', async () => {
    const wsA = newId('wsp');
    const wsB = newId('wsp');
    const cancelledOnly = await receiver();
    const everything = await receiver();
    const otherWorkspace = await receiver();
    await createEndpoint(svc.url, wsA, cancelledOnly.url, ['booking.cancelled']);
    await createEndpoint(svc.url, wsA, everything.url, ['booking.created', 'booking.cancelled', 'booking.rescheduled', 'calendar.created', 'calendar.failed']);
    await createEndpoint(svc.url, wsB, otherWorkspace.url, ['booking.created', 'booking.cancelled']);

    const booking = makeBooking();
    const created = await pub.publish('booking.created', wsA, { booking });
    const cancelled = await pub.publish('booking.cancelled', wsA, { booking: { ...booking, status: 'cancelled', version: 2 } });
    const failed = await pub.publish('calendar.failed', wsA, { booking });

    await waitFor(() => everything.requests.length === 3 && cancelledOnly.requests.length === 1, { timeoutMs: 10000 });
    await waitFor(async () => (await deliveriesOf(svc.url, wsA)).every((d) => d.status === 'succeeded'));
    expect(cancelledOnly.requests.map((r) => r.headers['webhook-id'])).toEqual([cancelled.id]);
    expect(new Set(everything.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([created.id, cancelled.id, failed.id]));
    const calendarFailed = everything.requests.find((r) => r.headers['webhook-id'] === failed.id)!;
    expect(JSON.parse(calendarFailed.body).data).toEqual({ booking, error_code: 'provider_unavailable' });
    expect(otherWorkspace.requests).toHaveLength(0);
    expect(otherWorkspace.connections()).toBe(0);
    expect(await deliveriesOf(svc.url, wsB)).toEqual([]);
  });

  it('writes one delivery per endpoint however often the event arrives (inbox)', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    await createEndpoint(svc.url, ws, rec.url, ['booking.rescheduled']);
    const from = svc.logs.length;
    const event = await pub.publish('booking.rescheduled', ws);
    await pub.publish('booking.rescheduled', ws, { id: event.id, booking: event.data.booking });
    await waitFor(() => rec.requests.length >= 1, { timeoutMs: 10000 });
    await waitForEventsHandled(svc.logs, [event.id, event.id], { from }); // the message and its copy
    await workerIdle(svc, svc.logs.length);
    expect(rec.requests).toHaveLength(1);
    expect(await deliveriesOf(svc.url, ws)).toHaveLength(1);
  });
});

describe('isolation between endpoints', () => {
  it('a slow endpoint with a backlog does not delay a healthy one: the healthy delivery arrives before any slow answer', async () => {
    const wsSlow = newId('wsp');
    const wsHealthy = newId('wsp');
    const slow = await receiver(() => ({ status: 200, delayMs: 1000 }));
    const healthy = await receiver();
    await createEndpoint(svc.url, wsSlow, slow.url, ['booking.created']);
    await createEndpoint(svc.url, wsHealthy, healthy.url, ['booking.created']);

    // 12 slow deliveries would fill all 8 worker slots without the per-endpoint cap of 2.
    for (let i = 0; i < 12; i++) await pub.publish('booking.created', wsSlow);
    await waitFor(() => slow.requests.length >= 2, { timeoutMs: 10000 });
    await pub.publish('booking.created', wsHealthy);
    await waitFor(() => healthy.requests.length === 1, { timeoutMs: 10000 });

    const firstSlowAnswer = slow.requests[0]!.at + 1000;
    expect(healthy.requests[0]!.at).toBeLessThan(firstSlowAnswer);
    // The cap holds: never more than 2 slow requests had arrived before the first slow answer.
    expect(slow.requests.filter((r) => r.at < firstSlowAnswer).length).toBeLessThanOrEqual(2);
  });
});

describe('secret rotation', () => {
  it('during the overlap sends two signatures, and the old and the new secret both verify', async () => {
    const ws = newId('wsp');
    const rec = await receiver();
    const { id, secret: oldSecret } = await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const rotated = await call(svc.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-endpoints/${id}/rotate-secret`, { ws });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.data.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);

    await pub.publish('booking.created', ws);
    const got = await waitFor(() => rec.requests[0], { timeoutMs: 10000 });
    const signatures = String(got.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    expect(() => new Webhook(oldSecret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(newSecret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
  });
});

describe('metrics', () => {
  it('exposes attempts by result, finished deliveries and the pending backlog on /metrics', async () => {
    const ws = newId('wsp');
    const rec = await receiver((n) => ({ status: n === 1 ? 500 : 200 }));
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    await pub.publish('booking.created', ws);
    await waitFor(async () => (await deliveriesOf(svc.url, ws))[0]?.status === 'succeeded', { timeoutMs: 10000 });
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    const value = (name: string, label = '') => {
      const line = text.split('\n').find((l) => l.startsWith(name) && l.includes(label) && !l.startsWith('#'));
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    expect(value('webhook_attempts_total', 'result="success"')).toBeGreaterThanOrEqual(1);
    expect(value('webhook_attempts_total', 'result="http_status"')).toBeGreaterThanOrEqual(1);
    expect(value('webhook_deliveries_finished_total', 'status="succeeded"')).toBeGreaterThanOrEqual(1);
    expect(value('webhook_delivery_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value('webhook_deliveries_pending')).toBeGreaterThanOrEqual(0);
    expect(value('webhook_oldest_pending_seconds')).toBeGreaterThanOrEqual(0);
  });
});
