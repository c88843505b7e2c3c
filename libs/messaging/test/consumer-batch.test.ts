import { sql } from 'drizzle-orm';
import { Pool } from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { createBroker, createEnvelope, inspectDeadLetters, startConsumer, type Broker, type Consumer, type ConsumerOptions, type EventEnvelope } from '../src';
import { waitForEventsHandled, waitForLog } from '../../testing/src/log-lines';
import { settle } from '../../testing/src/settle';
import { eventually, rawConnection } from './helpers/amqp-test-kit';
import { startTcpProxy } from './helpers/tcp-proxy';
import { countingPool } from './helpers/counting-pool';
import { RETRY_DELAYS, useConsumerRig, type Tx } from './helpers/consumer-rig';
import { createServiceTables, type ServiceTables, type TestDatabase, type TestDb } from './helpers/test-database';

/**
 * Consumers with `batch` (consumer.ts): messages waiting together share one transaction; a failure in a
 * batch sends each of its messages through a transaction of its own, with retries and dead letters as
 * without batching.
 */
const rig = useConsumerRig('consumer-batch-test');
const { logger, lines, services, consumers, effects, inboxCount } = rig;
let tdb: TestDatabase;
let prefix: string;
let broker: Broker;
beforeAll(() => {
  ({ tdb, prefix, broker } = rig);
});

type Options = ConsumerOptions<TestDb>;

const event = (n: number): EventEnvelope => createEnvelope({ type: 'booking.created', workspace_id: 'ws_1', data: { n } });
const nOf = (e: EventEnvelope): number => (e.data as { n: number }).n;

async function txid(tx: Tx): Promise<string> {
  const { rows } = await tx.execute<{ id: string }>(sql`SELECT txid_current()::text AS id`);
  return rows[0]!.id;
}

/**
 * A service whose queue exists (declared by a consumer that went away again) but has no subscriber, so
 * the messages published next wait there and reach the consumer together.
 */
async function idleService(name: string): Promise<{ tables: ServiceTables; queue: string }> {
  services.push(name);
  const tables = await createServiceTables(tdb.pool, name);
  const declare = startConsumer({ broker, db: tdb.db, inbox: tables.inbox, service: name, bindings: ['booking.*'], handler: async () => undefined, retryDelaysMs: RETRY_DELAYS, logger });
  await declare.ready();
  await declare.stop();
  return { tables, queue: declare.queues.queue };
}

function start(opts: Partial<Options> & Pick<Options, 'service' | 'inbox' | 'handler'>): Consumer {
  const c = startConsumer({ broker, db: tdb.db, bindings: ['booking.*'], retryDelaysMs: RETRY_DELAYS, logger, batch: true, prefetch: 20, ...opts });
  consumers.push(c);
  return c;
}

/** Resolves once the broker has handed every ready message of the queue to its consumer, and that has read them. */
async function allDelivered(queue: string): Promise<void> {
  const conn = await rawConnection();
  try {
    const ch = await conn.createChannel();
    await eventually(async () => (await ch.checkQueue(queue)).messageCount === 0, 5000, `every message of ${queue} delivered`);
  } finally {
    await conn.close();
  }
  await settle(100, 'the broker has sent every message; nothing announces when the consumer has read them off its socket');
}

test('messages waiting together share one transaction: one inbox insert, every handler on the same tx, one commit', async () => {
  const { tables, queue } = await idleService('together');
  const events = Array.from({ length: 20 }, (_, i) => event(i));
  for (const e of events) await broker.publish(e);
  const seen: Array<{ n: number; txid: string }> = [];
  let first = true;
  start({
    service: 'together',
    inbox: tables.inbox,
    handler: async (e, tx) => {
      if (first) {
        // The first delivery goes alone at once (no timer); hold its transaction until the broker has
        // handed over the other 19, so they wait together for the next one.
        first = false;
        await allDelivered(queue);
      }
      seen.push({ n: nOf(e), txid: await txid(tx) });
      await tx.insert(tables.effects).values({ eventId: e.id, note: 'done' });
    },
  });
  await waitForEventsHandled(lines, events.map((e) => e.id));

  expect(seen.map((s) => s.n)).toEqual(events.map(nOf)); // each once, in delivery order
  const transactions = new Set(seen.map((s) => s.txid));
  expect(transactions.size).toBeLessThanOrEqual(3); // without batching: 20
  // Each transaction's inbox rows are its own (one insert per batch, committed with the handlers' effects).
  const { rows } = await tdb.pool.query<{ xid: string; inbox: number; effects: number }>(
    `SELECT i.xmin::text AS xid, count(*)::int AS inbox, count(f.id)::int AS effects
       FROM together.inbox i LEFT JOIN together.effects f ON f.event_id = i.event_id AND f.xmin = i.xmin GROUP BY i.xmin::text`,
  );
  expect(rows).toHaveLength(transactions.size);
  expect(rows.every((r) => r.inbox === r.effects)).toBe(true);
  expect(rows.reduce((n, r) => n + r.inbox, 0)).toBe(20);
});

test('a throwing handler in a batch: the others commit once, the thrower is retried and dead-lettered as without batching, a duplicate is skipped', async () => {
  const { tables, queue } = await idleService('mixed');
  const events = Array.from({ length: 10 }, (_, i) => event(i));
  const doomed = events[3]!;
  const flaky = events[6]!;
  for (const e of events) await broker.publish(e);
  await broker.publish(events[8]!); // the same event twice, waiting with the rest
  const calls: Array<{ n: number; attempt: number; txid: string }> = [];
  let first = true;
  start({
    service: 'mixed',
    inbox: tables.inbox,
    handler: async (e, tx, info) => {
      if (first) {
        first = false;
        await allDelivered(queue);
      }
      calls.push({ n: nOf(e), attempt: info.attempt, txid: await txid(tx) });
      // Written before the failure: rolled back with its batch and its inbox rows.
      await tx.insert(tables.effects).values({ eventId: e.id, note: `attempt ${info.attempt}` });
      if (e.id === doomed.id) throw new Error('always fails');
      if (e.id === flaky.id && info.attempt === 1) throw new Error('fails once');
    },
  });

  const others = events.filter((e) => e.id !== doomed.id);
  await waitForEventsHandled(lines, [...others.map((e) => e.id), events[8]!.id]);
  await eventually(async () => (await inspectDeadLetters(broker, 'mixed')).count === 1, 5000, 'the dead letter');

  // Every effect committed exactly once (effects has no unique key: a second commit would show).
  const rows = await effects(tables);
  expect(rows.map((r) => r.eventId).sort()).toEqual(others.map((e) => e.id).sort());
  expect(rows.find((r) => r.eventId === flaky.id)?.note).toBe('attempt 2');
  expect(await inboxCount(tables)).toBe(9);
  await waitForLog(lines, { message: 'duplicate event skipped', event_id: events[8]!.id });

  // The batch with the thrower was rolled back and its messages ran again, each in its own transaction.
  const failedBatch = calls.find((c) => c.n === nOf(doomed) && c.attempt === 1)!.txid;
  const inFailedBatch = calls.filter((c) => c.txid === failedBatch).map((c) => c.n);
  expect(inFailedBatch.length).toBeGreaterThan(1);
  for (const n of inFailedBatch) {
    const alone = calls.filter((c) => c.n === n && c.attempt === 1 && c.txid !== failedBatch);
    expect(alone).toHaveLength(1);
    expect(calls.filter((c) => c.txid === alone[0]!.txid)).toHaveLength(1);
  }
  // The thrower's attempts go through the delay queues exactly as without batching, then the DLQ.
  expect([...new Set(calls.filter((c) => c.n === nOf(doomed)).map((c) => c.attempt))]).toEqual([1, 2, 3]);
  const [letter] = (await inspectDeadLetters(broker, 'mixed')).oldest;
  expect(letter).toMatchObject({ id: doomed.id, attempts: 3, routing_key: 'booking.created' });
  expect(letter!.last_error).toContain('always fails');
});

test('a consumer that dies in the middle of a batch loses nothing and commits nothing twice: the messages come back to the next one', async () => {
  const { tables, queue } = await idleService('phoenix_batch');
  const events = Array.from({ length: 8 }, (_, i) => event(i));
  for (const e of events) await broker.publish(e);

  // The consumer that dies: its own AMQP connection (through a proxy we cut) and its own pool (which we end
  // and whose backends we terminate), so nothing it does after the "crash" reaches the broker or the database.
  const proxy = await startTcpProxy(5672);
  const doomedBroker = createBroker({ url: proxy.url, prefix, logger, name: 'doomed', reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
  const pool = new Pool({ host: '127.0.0.1', port: 5432, user: 'postgres', database: tdb.name, max: 5, application_name: 'doomed-consumer' });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined)); // its backends are terminated below
  let inTheMiddle = false;
  let crash: () => void = () => undefined;
  const crashed = new Promise<void>((r) => (crash = r));
  const doomedCalls: Array<{ n: number; txid: string }> = [];
  let first = true;
  const doomed = startConsumer({
    broker: doomedBroker,
    db: drizzle({ client: pool }) as TestDb,
    inbox: tables.inbox,
    service: 'phoenix_batch',
    bindings: ['booking.*'],
    retryDelaysMs: RETRY_DELAYS,
    logger,
    batch: true,
    prefetch: 20,
    handler: async (e, tx) => {
      if (first) {
        first = false;
        await allDelivered(queue);
      }
      const id = await txid(tx);
      doomedCalls.push({ n: nOf(e), txid: id });
      await tx.insert(tables.effects).values({ eventId: e.id, note: 'doomed' });
      if (doomedCalls.filter((c) => c.txid === id).length === 2) {
        inTheMiddle = true;
        await crashed; // the process "dies" here, in the middle of a batch
      }
    },
  });
  try {
    await eventually(() => inTheMiddle, 10_000, 'two handlers of one batch of the doomed consumer');
    const batchTx = doomedCalls[doomedCalls.length - 1]!.txid;
    expect(doomedCalls.filter((c) => c.txid === batchTx)).toHaveLength(2); // two handlers of one open batch have written
    proxy.cut();
    void pool.end().catch(() => undefined);
    await tdb.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'doomed-consumer'`);
    crash();

    const effectsBefore = (await effects(tables)).length;
    let replacementCalls = 0;
    start({
      service: 'phoenix_batch',
      inbox: tables.inbox,
      handler: async (e, tx) => {
        replacementCalls += 1;
        await tx.insert(tables.effects).values({ eventId: e.id, note: 'replacement' });
      },
    });
    await eventually(async () => (await inboxCount(tables)) === 8, 10_000, 'every event handled by the replacement');
    const rows = await effects(tables);
    expect(rows.map((r) => r.eventId).sort()).toEqual(events.map((e) => e.id).sort());
    // The open batch committed nothing: its messages were all handled again by the replacement.
    const openBatch = doomedCalls.filter((c) => c.txid === batchTx).map((c) => events[c.n]!.id);
    for (const id of openBatch) expect(rows.find((r) => r.eventId === id)?.note).toBe('replacement');
    expect(replacementCalls).toBe(8 - effectsBefore);
  } finally {
    crash();
    await doomed.stop();
    await doomedBroker.close();
    await proxy.close();
  }
});

test('without batch, messages waiting together still go one per transaction', async () => {
  const { tables } = await idleService('single');
  const events = Array.from({ length: 6 }, (_, i) => event(i));
  for (const e of events) await broker.publish(e);
  const txids: string[] = [];
  start({
    service: 'single',
    inbox: tables.inbox,
    batch: false,
    handler: async (e, tx) => {
      txids.push(await txid(tx));
      await tx.insert(tables.effects).values({ eventId: e.id, note: 'done' });
    },
  });
  await waitForEventsHandled(lines, events.map((e) => e.id));
  expect(new Set(txids).size).toBe(6);
});

/**
 * `idempotent.batchHandler` (consumer.ts): messages of the idempotent path waiting together go to one
 * batchHandler call (one statement here), no inbox and no transaction; a failed batch runs each alone
 * through `handler`.
 */
describe('idempotent path with batchHandler', () => {
  /** A projection keeping each key's highest version; a CHECK that a bad event's row breaks. */
  async function projection(name: string): Promise<string> {
    const table = `"${name}".projection`;
    await tdb.pool.query(`CREATE TABLE ${table} (key text PRIMARY KEY, version int NOT NULL CHECK (version > 0), note text NOT NULL)`);
    return table;
  }
  const upsert = (table: string) => `INSERT INTO ${table} AS p (key, version, note) SELECT * FROM unnest($1::text[], $2::int[], $3::text[])
    ON CONFLICT (key) DO UPDATE SET version = excluded.version, note = excluded.note WHERE p.version < excluded.version`;
  const versionOf = (e: EventEnvelope): number => (nOf(e) === 3 ? -1 : 1);

  test('messages waiting together share one statement, each acknowledged after it; a lone message goes at once to handler', async () => {
    const { tables, queue } = await idleService('idem_together');
    const table = await projection('idem_together');
    const events = Array.from({ length: 20 }, (_, i) => event(i + 10));
    for (const e of events) await broker.publish(e);
    const { pool, counts, reset } = countingPool(tdb, 'idem-together');
    try {
      const alone: number[] = [];
      const batches: number[][] = [];
      let first = true;
      reset();
      start({
        service: 'idem_together',
        inbox: tables.inbox,
        batch: false,
        handler: async () => {
          throw new Error('the inbox path is not taken');
        },
        idempotent: {
          accepts: () => true,
          handler: async (e) => {
            if (first) {
              // Goes alone at once; held until the broker has handed over the other 19, which wait for the next statement.
              first = false;
              await allDelivered(queue);
            }
            alone.push(nOf(e));
            await pool.query(upsert(table), [[e.id], [1], ['alone']]);
          },
          batchHandler: async (envelopes) => {
            batches.push(envelopes.map(nOf));
            await pool.query(upsert(table), [envelopes.map((e) => e.id), envelopes.map(() => 1), envelopes.map(() => 'batch')]);
          },
        },
      });
      await waitForEventsHandled(lines, events.map((e) => e.id));

      expect(alone).toEqual([10]);
      expect(batches).toEqual([events.slice(1).map(nOf)]); // in delivery order, one call
      expect(counts.roundTrips).toBe(2); // without batchHandler: 20
      expect(counts.statements).toBe(2);
      expect(counts.begins).toBe(0);
      const { rows } = await tdb.pool.query<{ note: string; n: number }>(`SELECT note, count(*)::int AS n FROM ${table} GROUP BY note ORDER BY note`);
      expect(rows).toEqual([{ note: 'alone', n: 1 }, { note: 'batch', n: 19 }]);
      expect(await inboxCount(tables)).toBe(0);
      // Every message acknowledged: none ready, none unacknowledged.
      const conn = await rawConnection();
      try {
        const ch = await conn.createChannel();
        await eventually(async () => (await ch.checkQueue(queue)).messageCount === 0, 5000, 'the queue empty');
      } finally {
        await conn.close();
      }
    } finally {
      await pool.end();
    }
  });

  test('a message that fails its batch\'s statement: the others are applied alone, it alone is retried and dead-lettered', async () => {
    const { tables, queue } = await idleService('idem_mixed');
    const table = await projection('idem_mixed');
    const events = Array.from({ length: 10 }, (_, i) => event(i));
    const doomed = events[3]!;
    for (const e of events) await broker.publish(e);
    const alone: Array<{ n: number; attempt: number }> = [];
    const batches: number[][] = [];
    let first = true;
    start({
      service: 'idem_mixed',
      inbox: tables.inbox,
      batch: false,
      handler: async () => {
        throw new Error('the inbox path is not taken');
      },
      idempotent: {
        accepts: () => true,
        handler: async (e, db, info) => {
          if (first) {
            first = false;
            await allDelivered(queue);
          }
          alone.push({ n: nOf(e), attempt: info.attempt });
          await tdb.pool.query(upsert(table), [[e.id], [versionOf(e)], [`attempt ${info.attempt}`]]);
        },
        batchHandler: async (envelopes) => {
          batches.push(envelopes.map(nOf));
          await tdb.pool.query(upsert(table), [envelopes.map((e) => e.id), envelopes.map(versionOf), envelopes.map(() => 'batch')]);
        },
      },
    });

    const others = events.filter((e) => e.id !== doomed.id);
    await waitForEventsHandled(lines, others.map((e) => e.id));
    await eventually(async () => (await inspectDeadLetters(broker, 'idem_mixed')).count === 1, 5000, 'the dead letter');

    const { rows } = await tdb.pool.query<{ key: string; note: string }>(`SELECT key, note FROM ${table}`);
    expect(rows.map((r) => r.key).sort()).toEqual(others.map((e) => e.id).sort());
    // The batch holding the doomed message failed as a whole (nothing of it applied) and each of its messages ran alone.
    const failed = batches.find((b) => b.includes(3))!;
    expect(failed.length).toBeGreaterThan(1);
    for (const n of failed) expect(alone.filter((a) => a.n === n && a.attempt === 1)).toHaveLength(1);
    for (const n of failed.filter((x) => x !== 3)) expect(rows.find((r) => r.key === events[n]!.id)?.note).toBe('attempt 1');
    await waitForLog(lines, { message: 'idempotent batch failed; handling its messages one by one' });
    // The doomed message's attempts go through the delay queues as without batching, then the DLQ.
    expect([...new Set(alone.filter((a) => a.n === 3).map((a) => a.attempt))]).toEqual([1, 2, 3]);
    const [letter] = (await inspectDeadLetters(broker, 'idem_mixed')).oldest;
    expect(letter).toMatchObject({ id: doomed.id, attempts: 3, routing_key: 'booking.created' });
    expect(letter!.last_error).toContain('check');
    expect(await inboxCount(tables)).toBe(0);
  });
});
