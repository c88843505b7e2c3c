import { PassThrough } from 'node:stream';
import { newId } from '@sched/contracts';
import { createLogger } from '@sched/logger';
import { pgSchema } from 'drizzle-orm/pg-core';
import { inboxTable, startConsumer, type Consumer } from '@sched/messaging';
import { waitFor, waitForEventsHandled, type TestAmqp, type TestDatabase } from '@sched/testing';
import { createDeliveryDeadLetterPublisher } from '../src/events/dead-letter.publisher';
import { deadLetterMessageId } from '../src/events/delivery-dead-letter.message';
import { deadLettersToPublish } from '../src/store/delivery-worker.queries';
import {
  call,
  createEndpoint,
  deliveriesOf,
  receiverPool,
  workerIdle,
  type DispatchUnderTest,
  type Publisher,
  type Receiver,
} from './support/dispatch-harness';
import { startDispatchRig, type DispatchRig } from './support/dispatch-rig';

const receivers = receiverPool();
let rig: DispatchRig;
let db: TestDatabase;
let amqp: TestAmqp;
let svc: DispatchUnderTest;
let pub: Publisher;
const receiver = receivers.start;

async function dispatchDlq(): Promise<any> {
  const res = await call(svc.url, 'GET', '/admin/v1/dead-letters?limit=20');
  expect(res.status).toBe(200);
  return res.body.data.find((q: any) => q.service === 'webhook-dispatch');
}

async function replayDlq(queue = 'webhook-dispatch'): Promise<number> {
  const res = await call(svc.url, 'POST', `/admin/v1/dead-letters/${queue}/replay`);
  expect(res.status).toBe(200);
  return res.body.data.replayed;
}

/** Waits until the delivery failed for good and its DLQ message is confirmed (dead_letter_pending cleared). */
async function failedAndDeadLettered(ws: string): Promise<any> {
  return waitFor(async () => {
    const [d] = await deliveriesOf(svc.url, ws);
    if (d?.status !== 'failed') return null;
    const pending = await db.adminPool.query('SELECT dead_letter_pending FROM webhook_dispatch.deliveries WHERE id = $1', [d.id]);
    return pending.rows[0].dead_letter_pending === false ? d : null;
  }, { timeoutMs: 15000 });
}

const successes = (r: Receiver) => r.requests.filter((x) => x.status === 200);

beforeAll(async () => {
  rig = await startDispatchRig({ receivers, otherServices: [{ service: 'booking', retryDelaysMs: [] }, { service: 'availability' }] });
  ({ db, amqp, svc, pub } = rig);
});

afterAll(async () => {
  await rig?.close();
});

// One story, in order: the DLQ is shared by every test of this file.
describe('dead-lettering a failed delivery and replaying it with the messaging DLQ tools', () => {
  let ws: string;
  let rec: Receiver;
  let eventId: string;
  let deliveryId: string;

  it('puts a delivery that fails all 8 attempts in the webhook-dispatch DLQ, where GET /admin/v1/dead-letters shows it', async () => {
    ws = newId('wsp');
    rec = await receiver(() => ({ status: 500 }));
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    eventId = (await pub.publish('booking.created', ws)).id;
    const failed = await failedAndDeadLettered(ws);
    deliveryId = failed.id;
    expect(failed.attempt_count).toBe(8);

    const dlq = await dispatchDlq();
    expect(dlq).toMatchObject({ queue: `${amqp.prefix}webhook-dispatch.dlq`, available: true, count: 1 });
    expect(dlq.oldest).toEqual([
      {
        id: deadLetterMessageId(deliveryId, 1),
        type: 'webhook_delivery.failed',
        routing_key: 'webhook_delivery.failed',
        first_failed_at: expect.any(String),
        last_error: 'HTTP 500',
        attempts: 8,
      },
    ]);
  });

  it('lists the DLQ of every consuming service, the gateway excepted, with availability and counts', async () => {
    const res = await call(svc.url, 'GET', '/admin/v1/dead-letters');
    expect(res.body.data.map((q: any) => q.service)).toEqual(['booking', 'availability', 'invitation', 'calendar-sync', 'webhook-dispatch']);
    // Only this service has run on this test's prefix so far: the others' queues do not exist yet.
    expect(res.body.data.filter((q: any) => q.available).map((q: any) => q.service)).toEqual(['webhook-dispatch']);
  });

  it('after the receiver recovers, a DLQ replay re-queues the delivery and it is delivered once, with the same webhook-id', async () => {
    rec.behave(() => ({ status: 200 }));
    expect(await replayDlq()).toBe(1);
    await waitFor(() => successes(rec).length === 1, { timeoutMs: 10000 });
    expect(successes(rec)[0]!.headers['webhook-id']).toBe(eventId);
    const [d] = await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws);
      return list[0]?.status === 'succeeded' ? list : null;
    });
    expect(d).toMatchObject({ id: deliveryId, attempt_count: 9, failed_at: null });
    expect((await dispatchDlq()).count).toBe(0);
  });

  it('replaying again sends nothing more: the DLQ is empty and the delivery already succeeded', async () => {
    const from = svc.logs.length;
    expect(await replayDlq()).toBe(0);
    await workerIdle(svc, from);
    expect(successes(rec)).toHaveLength(1);
  });

  it('a dead letter present twice (published again before its confirm was recorded) still re-sends once', async () => {
    const ws2 = newId('wsp');
    const rec2 = await receiver(() => ({ status: 500 }));
    await createEndpoint(svc.url, ws2, rec2.url, ['booking.created']);
    await pub.publish('booking.created', ws2);
    const failed = await failedAndDeadLettered(ws2);
    // The crash case: the row still says "not yet published" and the publisher sends the same message again.
    await db.adminPool.query('UPDATE webhook_dispatch.deliveries SET dead_letter_pending = true WHERE id = $1', [failed.id]);
    const [due] = (await deadLettersToPublish(svc.service.db, 50)).filter((d) => d.id === failed.id);
    await db.adminPool.query('UPDATE webhook_dispatch.deliveries SET dead_letter_pending = false WHERE id = $1', [failed.id]);
    const again = createDeliveryDeadLetterPublisher(svc.service.broker);
    await again.publish(due!);
    await again.close();
    expect((await dispatchDlq()).count).toBe(2);

    rec2.behave(() => ({ status: 200 }));
    const from = svc.logs.length;
    expect(await replayDlq()).toBe(2);
    // Both copies handled (the second as a duplicate), the re-send done, and nothing more in flight.
    await waitForEventsHandled(svc.logs, [deadLetterMessageId(failed.id, due!.generation), deadLetterMessageId(failed.id, due!.generation)], { from, timeoutMs: 10000 });
    await waitFor(() => successes(rec2).length === 1, { timeoutMs: 10000 });
    await workerIdle(svc, svc.logs.length);
    expect(successes(rec2)).toHaveLength(1);
  });

  it('a stale dead letter (its delivery was replayed through the admin API and failed again) does not re-send a second time', async () => {
    const ws3 = newId('wsp');
    const rec3 = await receiver(() => ({ status: 500 }));
    await createEndpoint(svc.url, ws3, rec3.url, ['booking.created']);
    await pub.publish('booking.created', ws3);
    const failed = await failedAndDeadLettered(ws3);
    const replayed = await call(svc.url, 'POST', `/admin/v1/webhook-deliveries/${failed.id}/replay`);
    expect(replayed).toMatchObject({ status: 202, body: { data: { requeued: 1 } } });
    await waitFor(async () => (await failedAndDeadLettered(ws3)).attempt_count === 16, { timeoutMs: 15000 });
    expect((await dispatchDlq()).oldest.map((m: any) => m.id)).toEqual([deadLetterMessageId(failed.id, 1), deadLetterMessageId(failed.id, 2)]);

    rec3.behave(() => ({ status: 200 }));
    const from = svc.logs.length;
    expect(await replayDlq()).toBe(2);
    await waitForEventsHandled(svc.logs, [deadLetterMessageId(failed.id, 1), deadLetterMessageId(failed.id, 2)], { from, timeoutMs: 10000 });
    await waitFor(() => successes(rec3).length === 1, { timeoutMs: 10000 });
    await workerIdle(svc, svc.logs.length);
    expect(successes(rec3)).toHaveLength(1);
  });
});

describe('recovery through the admin API', () => {
  it('replays one delivery with the same webhook-id; a succeeded one is re-sent, a pending one is not sent twice', async () => {
    const ws = newId('wsp');
    const rec = await receiver((n) => ({ status: 200, delayMs: n === 2 ? 800 : 0 }));
    await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    const event = await pub.publish('booking.created', ws);
    const [done] = await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws);
      return list[0]?.status === 'succeeded' ? list : null;
    }, { timeoutMs: 10000 });

    const first = await call(svc.url, 'POST', `/admin/v1/webhook-deliveries/${done.id}/replay`);
    expect(first).toMatchObject({ status: 202, body: { data: { requeued: 1 } } });
    await waitFor(() => rec.requests.length === 2, { timeoutMs: 10000 });
    // The re-send is in flight (800 ms): the delivery is pending, so asking again changes nothing.
    const second = await call(svc.url, 'POST', `/admin/v1/webhook-deliveries/${done.id}/replay`);
    expect(second.body.data).toEqual({ requeued: 0 });
    await waitFor(async () => (await deliveriesOf(svc.url, ws))[0].status === 'succeeded', { timeoutMs: 10000 });
    await workerIdle(svc, svc.logs.length);
    expect(rec.requests.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
  });

  it('replays every failed delivery of an endpoint created in [from, to) and answers how many', async () => {
    const ws = newId('wsp');
    const rec = await receiver(() => ({ status: 500 }));
    const { id } = await createEndpoint(svc.url, ws, rec.url, ['booking.created', 'booking.cancelled']);
    await pub.publish('booking.created', ws);
    await pub.publish('booking.cancelled', ws);
    await waitFor(async () => {
      const list = await deliveriesOf(svc.url, ws, '?status=failed');
      return list.length === 2;
    }, { timeoutMs: 15000 });
    const list = await deliveriesOf(svc.url, ws);
    const from = new Date(Math.min(...list.map((d) => Date.parse(d.created_at)))).toISOString();
    const to = new Date(Date.now() + 1000).toISOString();

    rec.behave(() => ({ status: 200 }));
    const outside = await call(svc.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-deliveries/replay`, {
      ws,
      json: { endpoint_id: id, from: '2020-01-01T00:00:00Z', to: from },
    });
    expect(outside.body.data).toEqual({ requeued: 0 });
    const res = await call(svc.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-deliveries/replay`, { ws, json: { endpoint_id: id, from, to } });
    expect(res).toMatchObject({ status: 202, body: { data: { requeued: 2 } } });
    await waitFor(() => successes(rec).length === 2, { timeoutMs: 10000 });
    expect(new Set(successes(rec).map((r) => r.headers['webhook-id']))).toEqual(new Set(list.map((d) => d.event_id)));
  });

  it('refuses replays for an unknown delivery (404), another workspace’s endpoint (422) and a disabled endpoint (422)', async () => {
    const ws = newId('wsp');
    const rec = await receiver(() => ({ status: 500 }));
    const { id } = await createEndpoint(svc.url, ws, rec.url, ['booking.created']);
    expect((await call(svc.url, 'POST', `/admin/v1/webhook-deliveries/${newId('whd')}/replay`)).status).toBe(404);
    const body = { endpoint_id: id, from: '2020-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' };
    const other = newId('wsp');
    const foreign = await call(svc.url, 'POST', `/admin/v1/workspaces/${other}/webhook-deliveries/replay`, { ws: other, json: body });
    expect(foreign.status).toBe(422);
    expect(foreign.body.error).toMatchObject({ code: 'invalid_reference', details: [{ field: 'endpoint_id', issue: 'not_found' }] });
    await call(svc.url, 'PATCH', `/admin/v1/workspaces/${ws}/webhook-endpoints/${id}`, { ws, json: { enabled: false } });
    const disabled = await call(svc.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-deliveries/replay`, { ws, json: body });
    expect(disabled.body.error).toMatchObject({ code: 'invalid_reference', details: [{ field: 'endpoint_id', issue: 'endpoint_disabled' }] });
    const badRange = await call(svc.url, 'POST', `/admin/v1/workspaces/${ws}/webhook-deliveries/replay`, { ws, json: { ...body, to: body.from } });
    expect(badRange.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'to', issue: 'out_of_range' }] });
  });
});

describe("another service's DLQ", () => {
  let consumer: Consumer | undefined;
  afterAll(async () => {
    await consumer?.stop();
  });

  it('is counted, and POST /admin/v1/dead-letters/booking/replay moves its messages back to the booking queue', async () => {
    let fail = true;
    const handled: string[] = [];
    const quiet = createLogger({ service: 'booking-stand-in', level: 'error', stream: new PassThrough() });
    // Its own inbox: sharing webhook-dispatch's would let one consumer skip the other's events.
    await db.adminPool.query(`CREATE SCHEMA standin;
      CREATE TABLE standin.inbox (event_id text PRIMARY KEY, type text NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
      GRANT USAGE ON SCHEMA standin TO svc_webhook_dispatch; GRANT ALL ON standin.inbox TO svc_webhook_dispatch;`);
    // A stand-in booking consumer on this prefix (the real service is another team's): no retries, so a failure dead-letters at once.
    consumer = startConsumer({
      broker: pub.broker,
      db: svc.service.db,
      inbox: inboxTable(pgSchema('standin')),
      service: 'booking',
      bindings: ['calendar.created'],
      retryDelaysMs: [],
      logger: quiet,
      handler: async (e) => {
        if (fail) throw new Error('booking is broken');
        handled.push(e.id);
      },
    });
    await consumer.ready();
    const event = await pub.publish('calendar.created', newId('wsp'));
    const booking = await waitFor(async () => {
      const res = await call(svc.url, 'GET', '/admin/v1/dead-letters');
      const q = res.body.data.find((x: any) => x.service === 'booking');
      return q.count === 1 ? q : null;
    }, { timeoutMs: 10000 });
    expect(booking).toMatchObject({ queue: `${amqp.prefix}booking.dlq`, available: true });
    expect(booking.oldest[0]).toMatchObject({ id: event.id, type: 'calendar.created', routing_key: 'calendar.created', last_error: 'Error: booking is broken' });

    fail = false;
    expect(await replayDlq('booking.dlq')).toBe(1);
    await waitFor(() => handled.length === 1, { timeoutMs: 10000 });
    expect(handled).toEqual([event.id]);
  });

  it('answers 404 for a queue that is not one of the services, and for gateway, which has none', async () => {
    for (const name of ['gateway', 'nope', 'webhook-dispatch.retry.100ms']) {
      const res = await call(svc.url, 'POST', `/admin/v1/dead-letters/${name}/replay`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    // The queue name is valid but availability's queue was never created on this prefix.
    expect((await call(svc.url, 'POST', '/admin/v1/dead-letters/availability/replay')).status).toBe(404);
  });
});
