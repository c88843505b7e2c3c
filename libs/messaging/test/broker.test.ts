import { sql } from 'drizzle-orm';
import { BrokerUnavailableError, createBroker, createEnvelope, serviceQueueNames, startConsumer, type Broker, type EventEnvelope } from '../src';
import { settle } from '../../testing/src/settle';
import { AMQP_URL, deleteTopology, eventually, randomPrefix, rawConnection, testLogger, work } from './helpers/amqp-test-kit';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy';
import { createServiceTables, createTestDatabase, type ServiceTables, type TestDatabase } from './helpers/test-database';

const logger = testLogger();
const RETRY_DELAYS = [50, 100];
let tdb: TestDatabase;
let prefix: string;
let proxy: TcpProxy;
const brokers: Broker[] = [];

function broker(url = proxy.url, name = 'broker-test'): Broker {
  const b = createBroker({ url, prefix, logger, name, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
  brokers.push(b);
  return b;
}

const booking = (n: number): EventEnvelope => createEnvelope({ type: 'booking.created', workspace_id: 'ws_1', data: { n } });

async function effectStats(tables: ServiceTables): Promise<{ total: number; distinct: number }> {
  const [row] = await tdb.db
    .select({ total: sql<number>`count(*)::int`, distinct: sql<number>`count(distinct event_id)::int` })
    .from(tables.effects);
  return row!;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = randomPrefix();
});

beforeEach(async () => {
  proxy = await startTcpProxy(5672);
});

afterEach(async () => {
  await Promise.all(brokers.splice(0).map((b) => b.close()));
  await proxy.close();
});

afterAll(async () => {
  await deleteTopology(prefix, [
    { service: 'survivor', retryDelaysMs: RETRY_DELAYS },
    { service: 'drainer', retryDelaysMs: RETRY_DELAYS },
    { service: 'phoenix', retryDelaysMs: RETRY_DELAYS },
    { service: 'stubborn', retryDelaysMs: RETRY_DELAYS },
  ]);
  await tdb.drop();
});

test('check() passes once connected; publish resolves on confirm', async () => {
  const b = broker();
  await expect(b.check()).rejects.toBeInstanceOf(BrokerUnavailableError); // not connected yet
  await b.waitForConnection();
  await expect(b.check()).resolves.toBeUndefined();
  await expect(b.publish(booking(0))).resolves.toBeUndefined();
});

test('publish rejects an invalid envelope instead of sending it', async () => {
  const b = broker();
  await b.waitForConnection();
  await expect(b.publish({ ...booking(0), type: '' })).rejects.toThrow(/envelope\.type/);
});

test('after the connection drops, publish rejects at once; the broker reconnects, resubscribes, and nothing is lost or doubled', async () => {
  const tables = await createServiceTables(tdb.pool, 'survivor');
  const b = broker();
  let calls = 0;
  const consumer = startConsumer({
    broker: b,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'survivor',
    bindings: ['booking.created'],
    retryDelaysMs: RETRY_DELAYS,
    logger,
    handler: async (e, tx) => {
      calls += 1;
      await tx.insert(tables.effects).values({ eventId: e.id });
      await work(100); // slow, so some deliveries are in flight when the network goes
    },
  });
  await consumer.ready();

  const before = Array.from({ length: 30 }, (_, i) => booking(i));
  for (const e of before) await b.publish(e);
  await eventually(async () => (await effectStats(tables)).total >= 5, 5000, 'some events handled');
  expect((await effectStats(tables)).total).toBeLessThan(30); // the drop really happens mid-stream

  proxy.cut();
  await eventually(() => !b.isConnected(), 5000, 'the client to notice the drop');
  const started = Date.now();
  await expect(b.publish(booking(100))).rejects.toBeInstanceOf(BrokerUnavailableError);
  expect(Date.now() - started).toBeLessThan(50);
  await expect(b.check()).rejects.toBeInstanceOf(BrokerUnavailableError);
  await eventually(() => proxy.refused() >= 3, 5000, 'several failed reconnect attempts');

  proxy.restore();
  await b.waitForConnection(5000);
  const after = booking(200);
  await b.publish(after);

  await eventually(async () => (await effectStats(tables)).total >= 31, 10_000, 'all 31 events handled');
  // Redeliveries of what was in flight at the cut sit ahead of a marker published now; once the marker is
  // handled, stop() waits for the handlers still running, so a late duplicate effect would be in by then.
  const marker = booking(300);
  await b.publish(marker);
  await eventually(async () => (await effectStats(tables)).total >= 32, 5000, 'the marker handled');
  await consumer.stop();
  expect(await effectStats(tables)).toEqual({ total: 32, distinct: 32 });
  const handled = await tdb.db.select({ id: tables.inbox.eventId }).from(tables.inbox);
  expect(new Set(handled.map((r) => r.id))).toEqual(new Set([...before, after, marker].map((e) => e.id)));
  expect(calls).toBeGreaterThanOrEqual(32);
});

test('close() waits for the handler in flight and its commit before returning', async () => {
  const tables = await createServiceTables(tdb.pool, 'drainer');
  const b = broker(AMQP_URL);
  let started = false;
  const consumer = startConsumer({
    broker: b,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'drainer',
    bindings: ['booking.created'],
    retryDelaysMs: RETRY_DELAYS,
    logger,
    handler: async (e, tx) => {
      started = true;
      await work(300);
      await tx.insert(tables.effects).values({ eventId: e.id });
    },
  });
  await consumer.ready();
  await b.publish(booking(1));
  await eventually(() => started, 5000, 'the handler to start');
  await b.close();
  expect(await effectStats(tables)).toEqual({ total: 1, distinct: 1 });
  await expect(b.publish(booking(2))).rejects.toBeInstanceOf(BrokerUnavailableError);
});

test('when the exchange and the service queue are deleted under it, the broker and consumer recreate them and events flow again', async () => {
  const tables = await createServiceTables(tdb.pool, 'phoenix');
  const b = broker(AMQP_URL);
  const consumer = startConsumer({
    broker: b,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'phoenix',
    bindings: ['booking.created'],
    retryDelaysMs: RETRY_DELAYS,
    logger,
    handler: async (e, tx) => {
      await tx.insert(tables.effects).values({ eventId: e.id });
    },
  });
  await consumer.ready();

  const conn = await rawConnection();
  try {
    const ch = await conn.createChannel();
    await ch.deleteQueue(consumer.queues.queue);
    await ch.deleteExchange(b.names.events);
  } finally {
    await conn.close();
  }
  // The first publish after the deletion fails (404 closes the channel); the broker heals itself.
  await eventually(
    async () => {
      try {
        await b.publish(booking(7));
        return (await effectStats(tables)).total > 0;
      } catch {
        return false;
      }
    },
    5000,
    'an event to get through again',
  );
  expect((await effectStats(tables)).distinct).toBeGreaterThan(0);
});

test('reconnect attempts back off while the broker stays unreachable, and the first success resets the wait', async () => {
  const b = createBroker({ url: proxy.url, prefix, logger, name: 'backoff-test', reconnect: { initialDelayMs: 20, maxDelayMs: 400 } });
  brokers.push(b);
  await b.waitForConnection();
  proxy.cut();
  await settle(1500, 'the rate of reconnect attempts over a fixed window is what is measured');
  // Doubling from 20 ms (with jitter) to 400 ms: about 8 attempts in 1.5 s; a fixed 20 ms retry would make ~70.
  expect(proxy.refused()).toBeGreaterThanOrEqual(3);
  expect(proxy.refused()).toBeLessThan(20);
  proxy.restore();
  await b.waitForConnection(5000);
  proxy.cut();
  await eventually(() => proxy.refused() >= 1, 2000, 'the first attempt after the second drop');
  const first = Date.now();
  await eventually(() => proxy.refused() >= 2, 2000, 'the second attempt after the second drop');
  // Back to short waits: a success resets the backoff, so the second wait is 20-40 ms (base 40, jitter
  // ×0.5-1). Without the reset the count of failures goes on from the first outage (8 or so), the base
  // is capped at 400 and the wait is 200-400 ms. The bound sits between the two, with room for a loaded
  // machine's scheduling delay (a run of the whole suite on 2 cores saw 64 ms).
  expect(Date.now() - first).toBeLessThan(150);
});

test('publishes in flight when the connection drops settle at once, not when the broker comes back', async () => {
  const b = broker();
  await b.waitForConnection();
  const pending = Array.from({ length: 200 }, (_, i) => b.publish(booking(i)));
  proxy.cut();
  const started = Date.now();
  const results = await Promise.allSettled(pending);
  // The outbox relay holds its claimed rows until these settle: a reconnect (or the 10 s confirm timeout) is too long.
  expect(Date.now() - started).toBeLessThan(2000);
  expect(b.isConnected()).toBe(false);
  const rejected = results.filter((r) => r.status === 'rejected');
  expect(rejected.length).toBeGreaterThan(0); // some really were in flight at the cut
  for (const r of rejected) expect(r.reason).toBeInstanceOf(Error);
});

test('a channel whose setup the broker refuses is retried, and subscribes once the conflict is gone', async () => {
  const tables = await createServiceTables(tdb.pool, 'stubborn');
  const names = serviceQueueNames(prefix, 'stubborn', RETRY_DELAYS);
  // A queue of the same name with other arguments: the consumer's assertQueue fails with PRECONDITION_FAILED.
  const conn = await rawConnection();
  try {
    const ch = await conn.createChannel();
    await ch.assertQueue(names.queue, { durable: true });
  } finally {
    await conn.close();
  }
  const b = broker(AMQP_URL);
  await b.waitForConnection();
  const consumer = startConsumer({
    broker: b,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'stubborn',
    bindings: ['booking.created'],
    retryDelaysMs: RETRY_DELAYS,
    logger,
    handler: async (e, tx) => {
      await tx.insert(tables.effects).values({ eventId: e.id });
    },
  });
  await expect(consumer.ready(500)).rejects.toThrow(/not subscribed/);
  expect(b.isConnected()).toBe(true); // only the consumer's channel failed, the connection stays

  const fix = await rawConnection();
  try {
    await (await fix.createChannel()).deleteQueue(names.queue);
  } finally {
    await fix.close();
  }
  await consumer.ready(5000);
  await b.publish(booking(9));
  await eventually(async () => (await effectStats(tables)).total === 1, 5000, 'the event handled');
});
