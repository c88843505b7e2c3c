import { makeEvent, type EventMessage } from '@sched/contracts';
import { createDb, type Db } from '@sched/db';
import { createLogger } from '@sched/logger';
import { createBroker, enqueueEvent, startConsumer, startOutboxRelay, type Broker, type Consumer, type OutboxRelay } from '@sched/messaging';
import { cleanupAmqpPrefix, createTestDatabase, makeBooking, queuedCount, takeQueued, testAmqp, waitFor, type TestAmqp, type TestDatabase } from '@sched/testing';
import { startAvailabilityConsumer } from '../../availability/src/events/availability.consumer';
import { outbox as bookingOutbox } from '../../booking/src/store/schema';
import { BOOKING_EVENT_KINDS } from '../../calendar-sync/src/events/booking-changed.handler';
import { inbox as calendarSyncInbox } from '../../calendar-sync/src/store/schema';
import type { EventIngest } from '../../webhook-dispatch/src/store/ingest-batch.queries';
import { startEventConsumer } from '../../webhook-dispatch/src/events/event.consumer';
import { startInvitationConsumer } from '../src/events/invitation.consumer';
import { createUseLedger } from '../src/store/use-ledger.queries';

/**
 * Which queues a booking.created reaches, on a real RabbitMQ: booking's outbox relay (its routing rule,
 * store/schema.ts) publishes; the queues are declared by the consumers' own start functions (calendar-sync's
 * is inline in its app.ts: its binding constant is used the same way). Each consumer is stopped once its
 * topology is asserted, so every message the exchange routes waits in the queue and is counted there.
 */
const logger = createLogger({ service: 'routing-test', level: 'error' });
const QUEUES = ['invitation', 'availability', 'calendar-sync', 'webhook-dispatch'] as const;
const RETRY = [200];
let db: TestDatabase;
let mq: TestAmqp;
let broker: Broker;
let bookingDb: Db;
let relay: OutboxRelay | undefined;

function bookingCreated(n: number, invitationId: string | null): EventMessage {
  const id = `bkg_route${String(n).padStart(4, '0')}xxxxxxxxxxxxx`.slice(0, 26);
  return makeEvent('booking.created', {
    workspaceId: 'wks_routingxxxxxxxxxxxxxxx',
    data: {
      booking: makeBooking({ id, source: invitationId ? 'booking_page' : 'api' }),
      internal: { blocked_from: '2030-01-01T09:00:00.000Z', blocked_to: '2030-01-01T09:30:00.000Z', invitation_id: invitationId },
    },
  });
}

/** Ids of the messages waiting in each queue (taken off it), and the routing keys they came with. */
async function drainAll(): Promise<Record<(typeof QUEUES)[number], Array<{ id: string; key: string }>>> {
  const out = {} as Record<(typeof QUEUES)[number], Array<{ id: string; key: string }>>;
  for (const q of QUEUES) out[q] = (await takeQueued(mq.url, `${mq.prefix}${q}`)).map((m) => ({ id: m.messageId, key: m.routingKey }));
  return out;
}

/** Waits until `total` messages wait in the queues together (routing is asynchronous to the confirms of other queues). */
async function waitForWaiting(total: number): Promise<void> {
  await waitFor(async () => {
    let n = 0;
    for (const q of QUEUES) n += await queuedCount(mq.url, `${mq.prefix}${q}`);
    return n >= total;
  }, { timeoutMs: 20000, intervalMs: 100 });
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['booking', 'invitation'] });
  mq = testAmqp();
  broker = createBroker({ url: mq.url, prefix: mq.prefix, logger, name: 'routing-test' });
  await broker.waitForConnection();
  bookingDb = createDb(db.pool('booking'));
  const invitationDb = createDb(db.pool('invitation'));
  // Never handle a message here: each is stopped right after its topology is asserted.
  const consumers: Consumer[] = [
    startInvitationConsumer({ broker, db: invitationDb, logger, ledgerFor: createUseLedger, now: () => new Date(), retryDelaysMs: RETRY }),
    startAvailabilityConsumer({ broker, db: invitationDb, statements: db.pool('invitation'), logger, retryDelaysMs: RETRY }),
    startEventConsumer({ broker, db: invitationDb, logger, ingest: {} as EventIngest, retryDelaysMs: RETRY }),
    startConsumer({ broker, db: invitationDb, inbox: calendarSyncInbox, service: 'calendar-sync', bindings: BOOKING_EVENT_KINDS, handler: async () => undefined, retryDelaysMs: RETRY, logger }),
  ];
  for (const c of consumers) await c.ready();
  for (const c of consumers) await c.stop();
});

afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

afterAll(async () => {
  await broker.close();
  await cleanupAmqpPrefix(mq.url, mq.prefix, QUEUES.flatMap((q) => [q, `${q}.dlq`, ...RETRY.map((d) => `${q}.retry.${d}ms`)]), ['scheduling.events', 'scheduling.dlx']);
  await db.drop();
});

test("booking's relay: invitation receives the booking.created of an invitation Booking and none of 100 without; the others receive all", async () => {
  const without = Array.from({ length: 100 }, (_, i) => bookingCreated(i, null));
  const withInvitation = bookingCreated(100, 'biv_routingxxxxxxxxxxxxxx');
  await bookingDb.transaction(async (tx) => {
    for (const e of [...without, withInvitation]) await enqueueEvent(tx, bookingOutbox, e);
  });
  relay = startOutboxRelay({ pool: db.pool('booking'), table: bookingOutbox, broker, logger, pollIntervalMs: 50 });
  await waitForWaiting(1 + 3 * 101);
  const got = await drainAll();

  expect(got.invitation).toEqual([{ id: withInvitation.id, key: 'booking.created.invitation' }]);
  const all = [...without, withInvitation].map((e) => e.id).sort();
  for (const q of ['availability', 'calendar-sync', 'webhook-dispatch'] as const) {
    expect(got[q].map((m) => m.id).sort()).toEqual(all);
    expect(got[q].filter((m) => m.key === 'booking.created.no_invitation')).toHaveLength(100);
    expect(got[q].filter((m) => m.key === 'booking.created.invitation')).toHaveLength(1);
  }
  // eslint-disable-next-line no-console
  console.info(`deliveries to invitation per 100 Bookings without an invitation: ${got.invitation.filter((m) => m.id !== withInvitation.id).length}`);
});

test('a booking version before routing keys (bare booking.created, as before): every consumer, invitation included, still receives all', async () => {
  // The rolling upgrade with booking last: old booking replicas publish under the type; nothing is lost.
  const without = Array.from({ length: 100 }, (_, i) => bookingCreated(200 + i, null));
  const withInvitation = bookingCreated(300, 'biv_routingxxxxxxxxxxxxxx');
  for (const e of [...without, withInvitation]) await broker.publish(e);
  await waitForWaiting(4 * 101);
  const got = await drainAll();
  for (const q of QUEUES) {
    expect(got[q]).toHaveLength(101);
    expect(new Set(got[q].map((m) => m.key))).toEqual(new Set(['booking.created']));
  }
  // eslint-disable-next-line no-console
  console.info(`deliveries to invitation per 100 Bookings without an invitation, legacy key: ${got.invitation.filter((m) => m.id !== withInvitation.id).length}`);
});
