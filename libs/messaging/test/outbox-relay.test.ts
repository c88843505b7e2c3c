import { eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { pgSchema } from 'drizzle-orm/pg-core';
import { createBroker, createEnvelope, enqueueEvent, outboxTable, startOutboxRelay, type Broker, type EventEnvelope, type OutboxRelay } from '../src';
import { settle } from '../../testing/src/settle';
import { AMQP_URL, capturingLogger, deleteTopology, eventually, openProbe, randomPrefix, testLogger, type Probe } from './helpers/amqp-test-kit';
import { createServiceTables, createTestDatabase, type ServiceTables, type TestDatabase } from './helpers/test-database';

const logger = testLogger();
let tdb: TestDatabase;
let tables: ServiceTables;
let prefix: string;
let broker: Broker;
let probe: Probe;
const relays: OutboxRelay[] = [];

function event(n = 0): EventEnvelope {
  return createEnvelope({ type: 'booking.created', workspace_id: 'ws_1', data: { n } });
}

async function isPublished(id: string): Promise<boolean> {
  const [row] = await tdb.db.select({ at: tables.outbox.publishedAt }).from(tables.outbox).where(eq(tables.outbox.id, id));
  return row?.at instanceof Date;
}

/**
 * After `id` is marked published, a marker row goes through the relay's next round: a row left
 * unmarked (or claimed twice) would be published again by then, so it reaches the probe before the marker.
 */
async function publishMarkerAfter(id: string): Promise<EventEnvelope> {
  await eventually(() => isPublished(id), 5000, `${id} marked published`);
  const marker = event(-1);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, marker));
  await eventually(() => probe.ids().includes(marker.id), 5000, 'the marker event');
  return marker;
}

/** The relay's LISTEN is in place (idle after running it), so a commit from now on wakes it through NOTIFY. */
async function relayListening(): Promise<void> {
  await eventually(async () => {
    const { rows } = await tdb.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' AND query = 'LISTEN "${tables.schemaName}_outbox"'`,
    );
    return rows.length > 0;
  }, 3000, 'the relay to LISTEN');
}

function relay(overrides: Partial<Parameters<typeof startOutboxRelay>[0]> = {}): OutboxRelay {
  const r = startOutboxRelay({ pool: tdb.pool, table: tables.outbox, broker, logger, ...overrides });
  relays.push(r);
  return r;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = randomPrefix();
  broker = createBroker({ url: AMQP_URL, prefix, logger, name: 'outbox-relay-test' });
  await broker.waitForConnection();
});

beforeEach(async () => {
  // A fresh schema per test so rows of one test never meet the relays of another.
  tables = await createServiceTables(tdb.pool, `svc_${Math.random().toString(36).slice(2, 8)}`);
  probe = await openProbe(prefix);
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  await probe.close();
});

afterAll(async () => {
  await broker.close();
  await deleteTopology(prefix, []);
  await tdb.drop();
});

test('an event enqueued in a rolled-back transaction is never published; a committed one is published once and marked', async () => {
  const rolledBack = event(1);
  const committed = event(2);
  await expect(
    tdb.db.transaction(async (tx) => {
      await enqueueEvent(tx, tables.outbox, rolledBack);
      throw new Error('business rule failed after the event was written');
    }),
  ).rejects.toThrow('business rule failed');
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, committed));

  relay({ pollIntervalMs: 50 });
  await eventually(() => probe.messages.length >= 1, 5000, 'the committed event');
  // A later round (the marker's) would publish the committed row again if it had not been marked.
  const marker = await publishMarkerAfter(committed.id);

  expect(probe.ids()).toEqual([committed.id, marker.id]);
  const rows = await tdb.db.select().from(tables.outbox).where(eq(tables.outbox.id, committed.id));
  expect(await tdb.db.select().from(tables.outbox)).toHaveLength(2); // the marker and the committed row
  expect(rows[0]).toMatchObject({ id: committed.id, attempts: 0, lastError: null });
  expect(rows[0]!.publishedAt).toBeInstanceOf(Date);

  const msg = probe.messages[0]!;
  expect(msg.fields.routingKey).toBe('booking.created');
  expect(msg.properties).toMatchObject({ messageId: committed.id, type: 'booking.created', contentType: 'application/json', deliveryMode: 2 });
  expect(JSON.parse(msg.content.toString())).toEqual(committed);
});

test('an outbox declared with a routing rule publishes under its key; a rule that throws or names another type falls back to the type', async () => {
  // The same table as tables.outbox, declared by a publisher that routes its events (booking's store/schema.ts does this).
  const routed = outboxTable(pgSchema(tables.schemaName), {
    routingKey: (e) => {
      const n = (e.data as { n: number }).n;
      if (n === 1) return 'booking.created.invitation';
      if (n === 2) throw new Error('rule broke');
      if (n === 3) return 'booking.cancelled';
      return e.type;
    },
  });
  const [qualified, broken, otherType, plain] = [event(1), event(2), event(3), event(4)];
  const { logger: capturing, lines } = capturingLogger();
  await tdb.db.transaction(async (tx) => {
    for (const e of [qualified, broken, otherType, plain]) await enqueueEvent(tx, routed, e);
  });
  relay({ table: routed, pollIntervalMs: 50, logger: capturing });
  await eventually(() => probe.messages.length === 4, 5000, 'four events');
  expect(probe.messages.map((m) => [m.properties.messageId, m.fields.routingKey, m.properties.type])).toEqual([
    [qualified.id, 'booking.created.invitation', 'booking.created'],
    [broken.id, 'booking.created', 'booking.created'],
    [otherType.id, 'booking.created', 'booking.created'],
    [plain.id, 'booking.created', 'booking.created'],
  ]);
  // The body, and so the type every consumer and webhook sees, is the envelope as written.
  expect(JSON.parse(probe.messages[0]!.content.toString())).toEqual(qualified);
  expect(lines.join('\n')).toContain('outbox routing rule failed');
  expect(lines.join('\n')).toContain('outbox routing rule gave a key that is not of the event type');
});

test('the relay routingKey option routes the events of an outbox declared without a rule', async () => {
  const e = event(7);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  relay({ pollIntervalMs: 50, routingKey: (x) => `${x.type}.by_option` });
  await eventually(() => probe.ids().includes(e.id), 5000, 'the event');
  expect(probe.messages.map((m) => m.fields.routingKey)).toEqual(['booking.created.by_option']);
});

test('broker.publish refuses a routing key that is not the type or the type with qualifiers', async () => {
  const e = event(6);
  await expect(broker.publish(e, 'booking.cancelled')).rejects.toThrow(/not the event's type/);
  await expect(broker.publish(e, 'booking.createdX')).rejects.toThrow(/not the event's type/);
  await broker.publish(e, 'booking.created.invitation');
  await eventually(() => probe.ids().includes(e.id), 5000, 'the qualified event');
  expect(probe.messages.map((m) => m.fields.routingKey)).toEqual(['booking.created.invitation']);
});

test('a committed event reaches the broker within milliseconds through NOTIFY, not the poll timer', async () => {
  relay({ pollIntervalMs: 60_000 });
  await relayListening();
  const e = event(3);
  const committedAt = Date.now();
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  await eventually(() => probe.messages.length === 1, 2000, 'the event');
  const latency = Date.now() - committedAt;
  expect(probe.ids()).toEqual([e.id]);
  expect(latency).toBeLessThan(250);
});

test('two relays running at once publish each of 200 rows exactly once', async () => {
  const events = Array.from({ length: 200 }, (_, i) => event(i));
  relay({ batchSize: 20, pollIntervalMs: 20 });
  relay({ batchSize: 20, pollIntervalMs: 20 });
  // Written in several concurrent transactions while both relays are awake.
  await Promise.all(
    [0, 1, 2, 3].map((k) =>
      tdb.db.transaction(async (tx) => {
        for (const e of events.slice(k * 50, (k + 1) * 50)) await enqueueEvent(tx, tables.outbox, e);
      }),
    ),
  );
  await eventually(() => probe.messages.length >= 200, 10_000, '200 events');
  // A row both relays claimed would be published by the slower one before it marks the row. stop() waits
  // for the rounds in progress; a marker published after that on the same broker channel arrives after
  // everything they published.
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  const marker = event(-1);
  await broker.publish(marker);
  await eventually(() => probe.ids().includes(marker.id), 5000, 'the marker event');

  const ids = probe.ids();
  expect(ids.pop()).toBe(marker.id);
  expect(ids).toHaveLength(200);
  expect(new Set(ids).size).toBe(200);
  expect(new Set(ids)).toEqual(new Set(events.map((e) => e.id)));
  const [unpublished] = await tdb.db.select({ n: sql<number>`count(*)::int` }).from(tables.outbox).where(isNull(tables.outbox.publishedAt));
  expect(unpublished!.n).toBe(0);
});

test('a failed publish leaves the row unpublished with attempts and last_error, and it is published once the broker accepts it', async () => {
  let failing = true;
  const flaky = {
    isConnected: () => true,
    publish: async (e: EventEnvelope) => {
      if (failing) throw new Error("simulated nack for amqp://user:hunter2@broker, it's a 'quote'; DROP TABLE x; --\u0000");
      await broker.publish(e);
    },
  };
  const e = event(4);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  relay({ broker: flaky, pollIntervalMs: 20, maxBackoffMs: 50 });

  await eventually(
    async () => (await tdb.db.select().from(tables.outbox).where(eq(tables.outbox.id, e.id)))[0]!.attempts >= 2,
    5000,
    'two failed attempts',
  );
  const [row] = await tdb.db.select().from(tables.outbox).where(eq(tables.outbox.id, e.id));
  expect(row!.publishedAt).toBeNull();
  expect(row!.lastError).toContain('simulated nack');
  // Written as an SQL literal: quotes kept as text, nothing executed, the NUL Postgres cannot store dropped.
  expect(row!.lastError).toContain("it's a 'quote'; DROP TABLE x; --");
  expect(row!.lastError).not.toContain('hunter2');
  expect(probe.messages).toHaveLength(0);

  failing = false;
  await eventually(() => probe.messages.length === 1, 5000, 'the event after recovery');
  const marker = await publishMarkerAfter(e.id);
  expect(probe.ids()).toEqual([e.id, marker.id]);
  const published = await tdb.db.select().from(tables.outbox).where(isNotNull(tables.outbox.publishedAt));
  expect(published).toHaveLength(2);
});

test('while the broker is disconnected the relay leaves rows untouched', async () => {
  let looked = 0;
  const down = {
    isConnected: () => {
      looked += 1;
      return false;
    },
    publish: () => Promise.reject(new Error('must not be called')),
  };
  const e = event(5);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  relay({ broker: down, pollIntervalMs: 20 });
  // Each round asks the broker first; by the second, the first has decided about the row and backed off.
  await eventually(() => looked >= 2, 5000, 'two rounds to find the broker down');
  const [row] = await tdb.db.select().from(tables.outbox);
  expect(row).toMatchObject({ id: e.id, publishedAt: null, attempts: 0 });
});

test('when its LISTEN connection is killed, the relay listens again and keeps publishing without waiting for the poll', async () => {
  relay({ pollIntervalMs: 60_000 });
  const listenerPid = async (): Promise<number | undefined> => {
    const { rows } = await tdb.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN "${tables.schemaName}_outbox"'`,
    );
    return rows[0]?.pid;
  };
  await eventually(async () => (await listenerPid()) !== undefined, 3000, 'the relay to LISTEN');
  const killed = (await listenerPid())!;
  await tdb.pool.query('SELECT pg_terminate_backend($1)', [killed]);
  await eventually(async () => {
    const pid = await listenerPid();
    return pid !== undefined && pid !== killed;
  }, 5000, 'a new LISTEN connection');

  const e = event(6);
  const committedAt = Date.now();
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  await eventually(() => probe.messages.length === 1, 2000, 'the event');
  expect(Date.now() - committedAt).toBeLessThan(250);
  expect(probe.ids()).toEqual([e.id]);
});

test('rounds overlap: an event committed while a round waits for slow confirms goes out with the next round, and the channel sees commit order', async () => {
  const order: string[] = [];
  const gates: Array<() => void> = [];
  // A broker whose confirms for the first event hang until released; every other confirm is immediate.
  const slowFirst: Pick<Broker, 'publish' | 'isConnected'> = {
    isConnected: () => true,
    publish: (e) => {
      order.push(e.id);
      if (order.length === 1) return new Promise<void>((resolve) => gates.push(resolve));
      return Promise.resolve();
    },
  };
  relay({ broker: slowFirst, pollIntervalMs: 60_000, maxRoundsInFlight: 3 });
  await relayListening();
  const [first, second, third] = [event(1), event(2), event(3)];
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, first));
  await eventually(() => order.length === 1, 2000, 'the first publish');
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, second));
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, third));
  // Published while the first round still waits for its confirm.
  await eventually(() => order.length === 3, 2000, 'the later events');
  expect(order).toEqual([first.id, second.id, third.id]);
  await eventually(async () => (await tdb.db.select().from(tables.outbox).where(isNotNull(tables.outbox.publishedAt))).length === 2, 2000, 'later rows marked');
  const firstRow = await tdb.db.select().from(tables.outbox).where(eq(tables.outbox.id, first.id));
  expect(firstRow[0]!.publishedAt).toBeNull(); // still waiting for its confirm: not marked

  gates.forEach((release) => release());
  await eventually(async () => (await tdb.db.select().from(tables.outbox).where(isNull(tables.outbox.publishedAt))).length === 0, 2000, 'the first row marked');
  expect(order).toHaveLength(3); // nothing published twice
});

test('with one round in flight at most, a later event waits for the slow round (the limit holds)', async () => {
  const order: string[] = [];
  let release: (() => void) | undefined;
  const slowFirst: Pick<Broker, 'publish' | 'isConnected'> = {
    isConnected: () => true,
    publish: (e) => {
      order.push(e.id);
      if (order.length === 1) return new Promise<void>((resolve) => (release = resolve));
      return Promise.resolve();
    },
  };
  relay({ broker: slowFirst, pollIntervalMs: 60_000, maxRoundsInFlight: 1 });
  await relayListening();
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, event(1)));
  await eventually(() => order.length === 1, 2000, 'the first publish');
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, event(2)));
  await settle(300, 'proving the relay holds event 2 back: it announces neither the NOTIFY nor the round it does not start, and every later round is blocked behind the same limit, so no marker can get through');
  expect(order).toHaveLength(1);
  release!();
  await eventually(() => order.length === 2, 2000, 'the second publish after the first round ended');
});

/** An outbox row committed without any NOTIFY: as if the relay's LISTEN had been down when it committed. */
async function insertSilently(e: EventEnvelope): Promise<void> {
  await tdb.pool.query(`INSERT INTO "${tables.schemaName}".outbox (id, type, workspace_id, payload) VALUES ($1, $2, $3, $4)`, [e.id, e.type, e.workspace_id, JSON.stringify(e)]);
}

/**
 * The relay is idle: the scans it owes from its start and its LISTEN have claimed their rows. The first
 * marker may be published by the start's scan while the LISTEN's scan is still to run (it starts as the
 * first hands its rows over); the second is committed after that, so once it is out, that scan has claimed.
 */
async function relayIdle(): Promise<void> {
  for (const n of [-2, -3]) {
    const marker = event(n);
    await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, marker));
    await eventually(() => probe.ids().includes(marker.id), 5000, 'the idle marker');
  }
}

test('the NOTIFY names its rows and the relay claims exactly those; a row committed without one waits for a scan (a NOTIFY without ids, or the poll)', async () => {
  relay({ pollIntervalMs: 60_000 });
  await relayListening();
  await relayIdle();
  const missed = event(1);
  await insertSilently(missed);
  const named = event(2);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, named));
  await eventually(() => isPublished(named.id), 2000, 'the named row published');
  // A claim over every unpublished row would have taken the older, missed row first.
  expect(probe.ids()).not.toContain(missed.id);
  expect(await isPublished(missed.id)).toBe(false);

  await tdb.pool.query('SELECT pg_notify($1, $2)', [`${tables.schemaName}_outbox`, '']);
  await eventually(() => probe.ids().includes(missed.id), 2000, 'the missed row, found by the scan');
  expect(probe.ids().filter((id) => id === missed.id || id === named.id)).toEqual([named.id, missed.id]);
});

test('two relays racing publish every committed row exactly once: rows named by NOTIFY, rows whose NOTIFY was missed, rows of a NOTIFY without ids', async () => {
  const named = Array.from({ length: 150 }, (_, i) => event(i));
  const missed = Array.from({ length: 60 }, (_, i) => event(1000 + i));
  const unnamed = Array.from({ length: 30 }, (_, i) => event(2000 + i));
  relay({ batchSize: 20, pollIntervalMs: 50 });
  relay({ batchSize: 20, pollIntervalMs: 50 });
  await Promise.all([
    ...[0, 1, 2].map((k) =>
      tdb.db.transaction(async (tx) => {
        for (const e of named.slice(k * 50, (k + 1) * 50)) await enqueueEvent(tx, tables.outbox, e);
      }),
    ),
    (async () => {
      for (const e of missed) await insertSilently(e);
    })(),
    (async () => {
      const c = await tdb.pool.connect();
      try {
        await c.query('BEGIN');
        for (const e of unnamed) await c.query(`INSERT INTO "${tables.schemaName}".outbox (id, type, workspace_id, payload) VALUES ($1, $2, $3, $4)`, [e.id, e.type, e.workspace_id, JSON.stringify(e)]);
        await c.query('SELECT pg_notify($1, $2)', [`${tables.schemaName}_outbox`, '']);
        await c.query('COMMIT');
      } finally {
        c.release();
      }
    })(),
  ]);
  const all = [...named, ...missed, ...unnamed];
  await eventually(() => probe.messages.length >= all.length, 10_000, `${all.length} events`);
  // As in the test above with 200 rows: after both stopped, a marker on the same channel comes after anything they published.
  await Promise.all(relays.splice(0).map((r) => r.stop()));
  const marker = event(-1);
  await broker.publish(marker);
  await eventually(() => probe.ids().includes(marker.id), 5000, 'the marker event');

  const ids = probe.ids();
  expect(ids.pop()).toBe(marker.id);
  expect(ids).toHaveLength(all.length);
  expect(new Set(ids)).toEqual(new Set(all.map((e) => e.id)));
  const [unpublished] = await tdb.db.select({ n: sql<number>`count(*)::int` }).from(tables.outbox).where(isNull(tables.outbox.publishedAt));
  expect(unpublished!.n).toBe(0);
});

test('notifications arriving while a round is in flight are coalesced: their rows go out together in the next round', async () => {
  const order: string[] = [];
  let release: (() => void) | undefined;
  const slowFirst: Pick<Broker, 'publish' | 'isConnected'> = {
    isConnected: () => true,
    publish: (e) => {
      order.push(e.id);
      if (order.length === 1) return new Promise<void>((resolve) => (release = resolve));
      return Promise.resolve();
    },
  };
  relay({ broker: slowFirst, pollIntervalMs: 60_000, maxRoundsInFlight: 1 });
  await relayListening();
  const first = event(1);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, first));
  await eventually(() => order.length === 1, 2000, 'the first publish');
  const later = Array.from({ length: 5 }, (_, i) => event(10 + i));
  for (const e of later) await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  await settle(200, 'a NOTIFY reaches the relay shortly after its commit returns, and the relay announces nothing while the slow round holds it back: the five must all be heard before that round ends');
  release!();
  await eventually(async () => (await tdb.db.select().from(tables.outbox).where(isNull(tables.outbox.publishedAt))).length === 0, 2000, 'every row marked');
  expect(order).toEqual([first.id, ...later.map((e) => e.id)]);
  // One round marks its rows in one statement: now() is its transaction's start, the same for all of them.
  const { rows } = await tdb.pool.query(`SELECT count(DISTINCT published_at)::int AS rounds FROM "${tables.schemaName}".outbox WHERE id = ANY($1)`, [later.map((e) => e.id)]);
  expect(rows[0].rounds).toBe(1);
});

test('a connection whose prepared statements were dropped is replaced, and the relay keeps publishing', async () => {
  relay({ pollIntervalMs: 60_000, maxBackoffMs: 100 });
  await relayListening();
  await relayIdle();
  // Every idle connection of the pool (the relay's among them) forgets its prepared statements.
  const idle = await Promise.all(Array.from({ length: tdb.pool.idleCount }, () => tdb.pool.connect()));
  await Promise.all(idle.map((c) => c.query('DEALLOCATE ALL')));
  idle.forEach((c) => c.release());
  const e = event(7);
  await tdb.db.transaction((tx) => enqueueEvent(tx, tables.outbox, e));
  await eventually(() => isPublished(e.id), 5000, 'the event published and marked after the statements were dropped');
  expect(probe.ids().filter((id) => id === e.id)).toEqual([e.id]);
});
