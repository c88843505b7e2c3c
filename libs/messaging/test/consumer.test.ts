import { currentContext } from '@sched/logger';
import {
  createEnvelope,
  HEADERS,
  inspectDeadLetters,
  replayDeadLetters,
  startConsumer,
  topologyNames,
  type Broker,
  type Consumer,
  type EventEnvelope,
  type EventHandler,
} from '../src';
import { waitForEventsHandled, waitForLog } from '../../testing/src/log-lines';
import { eventually, rawConnection } from './helpers/amqp-test-kit';
import { RETRY_DELAYS, useConsumerRig, type Tx } from './helpers/consumer-rig';
import { createServiceTables, type ServiceTables, type TestDatabase } from './helpers/test-database';

const rig = useConsumerRig('consumer-test');
const { logger, lines, services, consumers, effects, inboxCount } = rig;
let tdb: TestDatabase;
let prefix: string;
let broker: Broker;
beforeAll(() => {
  ({ tdb, prefix, broker } = rig);
});

/** A consuming service: its own schema (inbox + effects) and its own queue. */
async function service(name: string, handler: EventHandler<Tx>, bindings = ['booking.*']): Promise<{ tables: ServiceTables; consumer: Consumer; queue: string }> {
  services.push(name);
  const tables = await createServiceTables(tdb.pool, name.replace(/-/g, '_'));
  const consumer = startConsumer({ broker, db: tdb.db, inbox: tables.inbox, service: name, bindings, handler, retryDelaysMs: RETRY_DELAYS, logger });
  consumers.push(consumer);
  await consumer.ready();
  return { tables, consumer, queue: consumer.queues.queue };
}

function recordEffect(tables: ServiceTables) {
  return (e: EventEnvelope, tx: Tx, note = 'done') => tx.insert(tables.effects).values({ eventId: e.id, note });
}

const booking = (n = 0): EventEnvelope => createEnvelope({ type: 'booking.created', workspace_id: 'ws_1', data: { n } });

test('an event delivered twice (the same envelope published twice) is handled once', async () => {
  let calls = 0;
  const { tables } = await service('dup', async (e, tx) => {
    calls += 1;
    await recordEffect(tables)(e, tx);
  });
  const e = booking();
  await broker.publish(e);
  await broker.publish(e);
  // Both deliveries finished: one handled, the other skipped (or, if deduplication broke, handled again).
  await waitForEventsHandled(lines, [e.id, e.id]);
  expect(await effects(tables)).toEqual([{ eventId: e.id, note: 'done' }]);
  expect(calls).toBe(1);
  expect(await inboxCount(tables)).toBe(1);
});

test('a message the accepts filter refuses is acknowledged without a transaction or inbox row; accepted ones are handled', async () => {
  const handled: number[] = [];
  services.push('picky');
  const tables = await createServiceTables(tdb.pool, 'picky');
  const consumer = startConsumer({
    broker,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'picky',
    bindings: ['booking.*'],
    accepts: (e) => (e.data as { n: number }).n % 2 === 0,
    handler: async (e, tx) => {
      handled.push((e.data as { n: number }).n);
      await recordEffect(tables)(e, tx);
    },
    retryDelaysMs: RETRY_DELAYS,
    logger,
  });
  consumers.push(consumer);
  await consumer.ready();
  for (const n of [1, 2, 3, 4]) await broker.publish(booking(n));
  // A refused message leaves no line: an accepted marker published after them is delivered after them,
  // and stop() waits for the handlers still running, so every earlier message has been dealt with.
  const marker = booking(6);
  await broker.publish(marker);
  await waitForEventsHandled(lines, [marker.id]);
  await consumer.stop();
  expect(handled.sort((a, b) => a - b)).toEqual([2, 4, 6]);
  expect(await inboxCount(tables)).toBe(3);
  // Nothing left unacknowledged: a restarted consumer gets no refused message again, only a later marker.
  const seen: string[] = [];
  const again = startConsumer({ broker, db: tdb.db, inbox: tables.inbox, service: 'picky', bindings: ['booking.*'], handler: async (e) => {
    seen.push(e.id);
  }, retryDelaysMs: RETRY_DELAYS, logger });
  consumers.push(again);
  await again.ready();
  const marker2 = booking(8);
  await broker.publish(marker2);
  await waitForEventsHandled(lines, [marker2.id]);
  await again.stop();
  expect(seen).toEqual([marker2.id]);
});

test('events taken by the idempotent path run on db with no inbox row; a failure there is retried like any other', async () => {
  services.push('selfish');
  const tables = await createServiceTables(tdb.pool, 'selfish');
  const seen: Array<{ n: number; attempt: number; inTx: boolean }> = [];
  const consumer = startConsumer({
    broker,
    db: tdb.db,
    inbox: tables.inbox,
    service: 'selfish',
    bindings: ['booking.*'],
    idempotent: {
      accepts: (e) => e.type === 'booking.created',
      handler: async (e, db, info) => {
        const n = (e.data as { n: number }).n;
        seen.push({ n, attempt: info.attempt, inTx: db !== tdb.db });
        if (n === 7 && info.attempt === 1) throw new Error('transient');
        // An upsert is safe to repeat: the same event twice leaves one row.
        await db.insert(tables.effects).values({ eventId: e.id, note: `n=${n}` }).onConflictDoNothing();
      },
    },
    handler: async (e, tx) => {
      await recordEffect(tables)(e, tx, 'through the inbox');
    },
    retryDelaysMs: RETRY_DELAYS,
    logger,
  });
  consumers.push(consumer);
  await consumer.ready();
  const a = booking(1);
  const flaky = booking(7);
  const other = createEnvelope({ type: 'booking.cancelled', workspace_id: 'ws_1', data: { n: 2 } });
  await broker.publish(a);
  await broker.publish(a); // a redelivery: the effect is idempotent by itself
  await broker.publish(flaky);
  await broker.publish(other);
  // a twice (each delivery handled by the idempotent path), flaky once it succeeds, other through the inbox.
  await waitForEventsHandled(lines, [a.id, a.id, flaky.id, other.id]);
  const rows = await effects(tables);
  expect(rows.find((r) => r.eventId === a.id)?.note).toBe('n=1');
  expect(rows.find((r) => r.eventId === flaky.id)?.note).toBe('n=7');
  expect(rows.find((r) => r.eventId === other.id)?.note).toBe('through the inbox');
  expect(seen.filter((x) => x.n === 1)).toHaveLength(2);
  expect(seen.filter((x) => x.n === 7).map((x) => x.attempt)).toEqual([1, 2]);
  expect(seen.every((x) => !x.inTx)).toBe(true);
  expect(await inboxCount(tables)).toBe(1); // only the event that went through the inbox
});

test('a handler that fails once is retried through its delay queue, its effect committed once, and other services never see the retry', async () => {
  const attempts: number[] = [];
  const contexts: Array<string | undefined> = [];
  const failing = await service('flaky', async (e, tx, info) => {
    attempts.push(info.attempt);
    contexts.push(currentContext().event_id);
    // Written before the failure: must be rolled back with the inbox row.
    await recordEffect(failing.tables)(e, tx, `attempt ${info.attempt}`);
    if (info.attempt === 1) throw new Error('transient failure');
  });
  let otherCalls = 0;
  // The bystander also takes marker.* events, which the flaky service never sees.
  const other = await service('bystander', async (e, tx) => {
    otherCalls += 1;
    await recordEffect(other.tables)(e, tx);
  }, ['booking.*', 'marker.*']);

  const e = booking(1);
  const from = lines.length;
  const publishedAt = Date.now();
  await broker.publish(e);
  await waitForLog(lines, { message: 'event handled', event_id: e.id, queue: failing.queue }, { from });
  expect(Date.now() - publishedAt).toBeGreaterThanOrEqual(RETRY_DELAYS[0]!); // it waited in the delay queue
  // A retry that leaked to the bystander would reach its queue before this marker, published after the
  // retry was handled; stop() then waits for whatever the bystander still had in hand.
  const marker = createEnvelope({ type: 'marker.sent', workspace_id: 'ws_1', data: {} });
  await broker.publish(marker);
  await waitForLog(lines, { message: 'event handled', event_id: marker.id, queue: other.queue }, { from });
  await other.consumer.stop();

  expect(attempts).toEqual([1, 2]);
  expect(contexts).toEqual([e.id, e.id]);
  expect(await effects(failing.tables)).toEqual([{ eventId: e.id, note: 'attempt 2' }]);
  expect(otherCalls).toBe(2); // e and the marker
  expect(await effects(other.tables)).toHaveLength(2);
  // Handled once, and no second copy skipped as a duplicate either.
  const bystanderLines = (await waitForLog(lines, { event_id: e.id, queue: other.queue }, { from })).map((l) => l.message);
  expect(bystanderLines).toEqual(['event handled']);
  const dead = await inspectDeadLetters(broker, 'flaky');
  expect(dead.count).toBe(0);
});

test('an event whose handler keeps failing lands in <service>.dlq with the error; replay brings it back to a fixed handler, which handles it once', async () => {
  let broken = true;
  let calls = 0;
  const s = await service('doomed', async (e, tx) => {
    calls += 1;
    await recordEffect(s.tables)(e, tx);
    if (broken) throw new Error('calendar provider said no (token=abc123secret)');
  });
  const e = booking(2);
  await broker.publish(e);

  await eventually(async () => (await inspectDeadLetters(broker, 'doomed')).count === 1, 5000, 'the dead letter');
  expect(calls).toBe(RETRY_DELAYS.length + 1);
  expect(await effects(s.tables)).toEqual([]);

  // Peeking twice shows the same message: inspecting does not consume it.
  const first = await inspectDeadLetters(broker, 'doomed', { limit: 5 });
  const report = await inspectDeadLetters(broker, 'doomed', { limit: 5 });
  expect(first).toEqual(report);
  expect(report.queue).toBe(`${prefix}doomed.dlq`);
  expect(report.oldest).toHaveLength(1);
  const [letter] = report.oldest;
  expect(letter).toMatchObject({ id: e.id, type: 'booking.created', routing_key: 'booking.created', attempts: 3 });
  expect(letter!.last_error).toContain('calendar provider said no');
  expect(letter!.last_error).not.toContain('abc123secret');
  expect(Date.parse(letter!.first_failed_at!)).not.toBeNaN();

  broken = false;
  const progress: number[] = [];
  const from = lines.length;
  const moved = await replayDeadLetters(broker, 'doomed', { onProgress: (n) => progress.push(n) });
  expect(moved).toBe(1);
  expect(progress).toEqual([1]);
  await waitForEventsHandled(lines, [e.id], { from });
  expect(await effects(s.tables)).toEqual([{ eventId: e.id, note: 'done' }]);
  expect(calls).toBe(RETRY_DELAYS.length + 2);
  expect((await inspectDeadLetters(broker, 'doomed')).count).toBe(0);
});

test('a replayed event that fails again goes through all its retries afresh before returning to the DLQ', async () => {
  const attempts: number[] = [];
  await service('stubborn', async (_e, _tx, info) => {
    attempts.push(info.attempt);
    throw new Error('still broken');
  });
  await broker.publish(booking(3));
  await eventually(async () => (await inspectDeadLetters(broker, 'stubborn')).count === 1, 5000, 'first dead letter');
  expect(await replayDeadLetters(broker, 'stubborn')).toBe(1);
  await eventually(async () => (await inspectDeadLetters(broker, 'stubborn')).count === 1, 5000, 'second dead letter');
  expect(attempts).toEqual([1, 2, 3, 1, 2, 3]);
  const [letter] = (await inspectDeadLetters(broker, 'stubborn')).oldest;
  expect(letter).toMatchObject({ attempts: 3, routing_key: 'booking.created' });
});

test('a message that is not a valid envelope goes straight to the DLQ and the consumer keeps handling the next one', async () => {
  let calls = 0;
  const s = await service('strict', async (e, tx) => {
    calls += 1;
    await recordEffect(s.tables)(e, tx);
  });
  const conn = await rawConnection();
  try {
    const ch = await conn.createConfirmChannel();
    const names = topologyNames(prefix);
    ch.publish(names.events, 'booking.created', Buffer.from('{not json'), { messageId: 'garbage-1', headers: { 'x-custom': 'kept' } });
    ch.publish(names.events, 'booking.created', Buffer.from(JSON.stringify({ hello: 'world' })), { messageId: 'garbage-2' });
    await ch.waitForConfirms();
  } finally {
    await conn.close();
  }
  const good = booking(4);
  await broker.publish(good);

  await eventually(async () => (await inspectDeadLetters(broker, 'strict')).count === 2, 5000, 'two dead letters');
  await eventually(async () => (await effects(s.tables)).length === 1, 5000, 'the valid event');
  expect(calls).toBe(1);
  const report = await inspectDeadLetters(broker, 'strict');
  expect(report.oldest.map((l) => [l.id, l.attempts])).toEqual([
    ['garbage-1', 1],
    ['garbage-2', 1],
  ]);
  expect(report.oldest[0]!.last_error).toMatch(/not JSON/);
  expect(report.oldest[1]!.last_error).toMatch(/envelope\.id/);

  // The original routing key and headers survive dead-lettering.
  const conn2 = await rawConnection();
  try {
    const ch = await conn2.createChannel();
    const m = await ch.get(`${prefix}strict.dlq`, { noAck: false });
    expect(m && m.fields.routingKey).toBe('booking.created');
    expect(m && m.properties.headers).toMatchObject({ 'x-custom': 'kept', [HEADERS.attempts]: 1 });
    expect(m && m.properties.headers?.BCC).toBeUndefined();
  } finally {
    await conn2.close(); // returns the peeked message
  }
});
