/**
 * Counts what the consumer and the outbox relay cost per message in Postgres, on the local Postgres and
 * RabbitMQ (issue 18, docs/performance.md): round trips, statements and transactions per message, read on
 * the library's own pool (every query it sends is counted), and the CPU time of
 * the Postgres backends serving it (/proc/<pid>/schedstat, nanoseconds). Counts, not wall-clock timings:
 * they do not depend on what else runs on the machine.
 *
 *   node --import tsx libs/messaging/bench/count.bench.ts
 *   COUNT_MESSAGES=100 COUNT_PREFETCH=10,100 COUNT_ONLY=consumer|idempotent|relay COUNT_BATCH=0 node --import tsx libs/messaging/bench/count.bench.ts
 *
 * Consumer: N messages wait in the queue when the consumer subscribes (delivered together); the handler
 * writes one row in the consumer's transaction. Idempotent: the same, through the `idempotent` path (no
 * inbox, no transaction): each message upserts one row keeping the highest version, as one named statement
 * in autocommit; with `batchHandler`, the messages waiting together upsert their rows in one named
 * statement (unnest of arrays, as availability's projection does). Relay: N events committed one by one (each its own
 * transaction, the next after the previous commit) while the relay listens; first on a fresh table, then
 * after WARM_EVENTS more were published through it since the last vacuum (autovacuum off for the table).
 */
import { readFileSync } from 'node:fs';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { Pool } from 'pg';
import { createBroker, createEnvelope, enqueueEvent, startConsumer, startOutboxRelay, type Broker, type ConsumerOptions, type EventEnvelope } from '../src';
import { AMQP_URL, deleteTopology, eventually, openProbe, randomPrefix, testLogger } from '../test/helpers/amqp-test-kit';
import { countingPool, type Counts } from '../test/helpers/counting-pool';
import { createServiceTables, createTestDatabase, type TestDatabase, type TestDb } from '../test/helpers/test-database';

const N = Number(process.env.COUNT_MESSAGES ?? 100);
const PREFETCHES = (process.env.COUNT_PREFETCH ?? '10,100').split(',').map(Number);
const WARM_EVENTS = Number(process.env.COUNT_WARM_EVENTS ?? 2000);
/** `consumer` or `relay`: only that half. */
const ONLY = process.env.COUNT_ONLY;
const logger = testLogger();
const consumerServices: string[] = [];

/** CPU time (ns) of the Postgres backends with this application_name, from /proc/<pid>/schedstat. */
async function backendCpuNs(admin: Pool, applicationName: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // gone
    }
  }
  return out;
}

function cpuDeltaMs(before: Map<number, number>, after: Map<number, number>): number {
  let ns = 0;
  for (const [pid, t] of after) ns += t - (before.get(pid) ?? 0);
  return ns / 1e6;
}

const per = (n: number) => Math.round((n / N) * 100) / 100;
const kinds = (c: Counts) => Object.fromEntries([...c.byKind].map(([k, v]) => [k, per(v)]));

/**
 * N messages waiting in the consumer's queue (a first consumer declares it and goes away), then `opts`'s consumer
 * drains them until `rowsIn` holds N rows: the pool's counts over that, and CPU per message of its Postgres
 * backends and of this process.
 */
async function drain(
  opts: ConsumerOptions<TestDb>,
  c: { admin: Pool; broker: Broker; app: string; name: string; prefetch: number; pool: Pool; counts: Counts; reset: () => void; rowsIn: string },
): Promise<{ snapshot: Counts; backendMs: number; nodeMs: number }> {
  const first = startConsumer(opts);
  await first.ready();
  await first.stop();
  await Promise.all(Array.from({ length: N }, (_, i) => c.broker.publish(createEnvelope({ type: `${c.name}.created`, workspace_id: 'ws_1', data: { i } }))));
  // Warm the pool so backend start-up is not counted.
  const held = await Promise.all(Array.from({ length: Math.min(c.prefetch, 10) }, () => c.pool.connect()));
  held.forEach((h) => h.release());
  c.reset();
  const cpuBefore = await backendCpuNs(c.admin, c.app);
  const started = process.cpuUsage();
  const consumer = startConsumer(opts);
  await eventually(async () => (await c.admin.query(`SELECT count(*)::int AS n FROM ${c.rowsIn}`)).rows[0].n >= N, 30_000, 'every message handled');
  await consumer.stop();
  const cpu = process.cpuUsage(started);
  const cpuAfter = await backendCpuNs(c.admin, c.app);
  const snapshot = { ...c.counts, byKind: new Map(c.counts.byKind) };
  await c.pool.end();
  consumerServices.push(c.name);
  return {
    snapshot,
    backendMs: Math.round((cpuDeltaMs(cpuBefore, cpuAfter) / N) * 1000) / 1000,
    nodeMs: Math.round(((cpu.user + cpu.system) / 1000 / N) * 1000) / 1000,
  };
}

async function countConsumer(tdb: TestDatabase, admin: Pool, broker: Broker, prefetch: number, batch: boolean): Promise<Record<string, unknown>> {
  const app = `count-consumer-${prefetch}-${batch ? 'b' : 's'}`;
  const { pool, counts, reset } = countingPool(tdb, app);
  const db = drizzle({ client: pool }) as TestDb;
  const name = `cons_${prefetch}_${batch ? 'b' : 's'}`;
  const tables = await createServiceTables(admin, name);
  const opts: ConsumerOptions<TestDb> = {
    broker,
    db,
    inbox: tables.inbox,
    service: name,
    bindings: [`${name}.*`],
    prefetch,
    logger,
    handler: async (e, tx) => {
      await tx.insert(tables.effects).values({ eventId: e.id, note: 'done' });
    },
    ...(batch ? { batch: true } : {}),
  } as ConsumerOptions<TestDb>;
  const { snapshot, backendMs, nodeMs } = await drain(opts, { admin, broker, app, name, prefetch, pool, counts, reset, rowsIn: `"${name}".effects` });
  return {
    scenario: `consumer, ${N} messages waiting, prefetch ${prefetch}, ${batch ? 'batch' : 'one per transaction'}`,
    per_message: {
      round_trips: per(snapshot.roundTrips),
      statements: per(snapshot.statements),
      transactions: per(snapshot.begins),
      commits: per([...snapshot.byKind].filter(([k]) => /^commit/i.test(k)).reduce((n, [, v]) => n + v, 0) ?? 0),
      postgres_backend_cpu_ms: backendMs,
      node_cpu_ms_this_process: nodeMs,
      statements_by_kind: kinds(snapshot),
    },
  };
}

/** One row per key, the highest version kept: the shape of availability's booked-interval projection. */
const upsertOne = (schema: string) => ({
  name: `count_upsert_one_${schema}`,
  text: `INSERT INTO "${schema}".projection AS p (key, version, note) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET version = excluded.version, note = excluded.note WHERE p.version < excluded.version`,
});
const upsertMany = (schema: string) => ({
  name: `count_upsert_many_${schema}`,
  text: `INSERT INTO "${schema}".projection AS p (key, version, note) SELECT * FROM unnest($1::text[], $2::int[], $3::text[])
         ON CONFLICT (key) DO UPDATE SET version = excluded.version, note = excluded.note WHERE p.version < excluded.version`,
});

async function countIdempotent(tdb: TestDatabase, admin: Pool, broker: Broker, prefetch: number, batch: boolean): Promise<Record<string, unknown>> {
  const app = `count-idem-${prefetch}-${batch ? 'b' : 's'}`;
  const { pool, counts, reset } = countingPool(tdb, app);
  const db = drizzle({ client: pool }) as TestDb;
  const name = `idem_${prefetch}_${batch ? 'b' : 's'}`;
  const tables = await createServiceTables(admin, name);
  const table = `"${name}".projection`;
  await admin.query(`CREATE TABLE ${table} (key text PRIMARY KEY, version int NOT NULL, note text NOT NULL)`);
  const one = upsertOne(name);
  const many = upsertMany(name);
  const opts: ConsumerOptions<TestDb> = {
    broker,
    db,
    inbox: tables.inbox,
    service: name,
    bindings: [`${name}.*`],
    prefetch,
    logger,
    handler: async () => undefined,
    idempotent: {
      accepts: () => true,
      handler: async (e) => {
        await pool.query({ ...one, values: [e.id, 1, 'done'] });
      },
      ...(batch
        ? {
            batchHandler: async (envelopes: EventEnvelope[]) => {
              await pool.query({ ...many, values: [envelopes.map((e) => e.id), envelopes.map(() => 1), envelopes.map(() => 'done')] });
            },
          }
        : {}),
    },
  };
  const { snapshot, backendMs, nodeMs } = await drain(opts, { admin, broker, app, name, prefetch, pool, counts, reset, rowsIn: table });
  return {
    scenario: `idempotent, ${N} messages waiting, prefetch ${prefetch}, ${batch ? 'batchHandler' : 'one statement per message'}`,
    per_message: {
      round_trips: per(snapshot.roundTrips),
      statements: per(snapshot.statements),
      postgres_backend_cpu_ms: backendMs,
      node_cpu_ms_this_process: nodeMs,
      statements_by_kind: kinds(snapshot),
    },
  };
}

async function countRelay(tdb: TestDatabase, admin: Pool, broker: Broker, warm: number): Promise<Record<string, unknown>> {
  const app = `count-relay-${warm}`;
  const { pool, counts, reset } = countingPool(tdb, app);
  const schema = `relay_${warm}`;
  const tables = await createServiceTables(admin, schema);
  await admin.query(`ALTER TABLE "${schema}".outbox SET (autovacuum_enabled = false)`);
  const writer = drizzle({ client: admin }) as TestDb;
  const probe = await openProbe(broker.names.prefix, `${schema}.#`);
  const relay = startOutboxRelay({ pool, table: tables.outbox, broker, logger, pollIntervalMs: 60_000 });
  await eventually(async () => {
    const { rows } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' AND query = $2`, [app, `LISTEN "${schema}_outbox"`]);
    return rows.length > 0;
  }, 5000, 'the relay to LISTEN');
  const event = (i: number) => createEnvelope({ type: `${schema}.created`, workspace_id: 'ws_1', data: { i } });
  // Rows published since the last vacuum leave dead entries in the partial index of unpublished rows.
  for (let i = 0; i < warm; i += 1) await writer.transaction((tx) => enqueueEvent(tx, tables.outbox, event(i)));
  await eventually(() => probe.messages.length >= warm, 60_000, 'the warm-up events');
  const held = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
  held.forEach((c) => c.release());
  reset();
  const cpuBefore = await backendCpuNs(admin, app);
  for (let i = 0; i < N; i += 1) await writer.transaction((tx) => enqueueEvent(tx, tables.outbox, event(warm + i)));
  await eventually(() => probe.messages.length >= warm + N, 30_000, 'every event published');
  await eventually(async () => (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".outbox WHERE published_at IS NULL`)).rows[0].n === 0, 10_000, 'every row marked');
  const cpuAfter = await backendCpuNs(admin, app);
  const snapshot = { ...counts, byKind: new Map(counts.byKind) };
  const ids = probe.ids();
  await relay.stop();
  await probe.close();
  await pool.end();
  return {
    scenario: `relay, ${N} events committed one by one, ${warm} published before since the last vacuum`,
    published_twice: ids.length - new Set(ids).size,
    per_event: {
      rounds: per(snapshot.begins),
      round_trips: per(snapshot.roundTrips),
      statements: per(snapshot.statements),
      commits: per([...snapshot.byKind].filter(([k]) => /^commit/i.test(k)).reduce((n, [, v]) => n + v, 0) ?? 0),
      postgres_backend_cpu_ms: Math.round((cpuDeltaMs(cpuBefore, cpuAfter) / N) * 1000) / 1000,
      statements_by_kind: kinds(snapshot),
    },
  };
}

async function main(): Promise<void> {
  const tdb = await createTestDatabase();
  const admin = tdb.pool;
  const prefix = randomPrefix();
  const broker = createBroker({ url: AMQP_URL, prefix, logger, name: 'count-bench' });
  await broker.waitForConnection();
  const results: Array<Record<string, unknown>> = [];
  try {
    const batchModes = process.env.COUNT_BATCH === '0' ? [false] : process.env.COUNT_BATCH === '1' ? [true] : [false, true];
    if (ONLY === undefined || ONLY === 'consumer') {
      for (const prefetch of PREFETCHES) for (const batch of batchModes) results.push(await countConsumer(tdb, admin, broker, prefetch, batch));
    }
    if (ONLY === undefined || ONLY === 'idempotent') {
      for (const prefetch of PREFETCHES) for (const batch of batchModes) results.push(await countIdempotent(tdb, admin, broker, prefetch, batch));
    }
    if (ONLY === undefined || ONLY === 'relay') for (const warm of [0, WARM_EVENTS]) results.push(await countRelay(tdb, admin, broker, warm));
  } finally {
    await broker.close();
    await deleteTopology(prefix, consumerServices.map((service) => ({ service }))).catch(() => undefined);
    await tdb.drop();
  }
  for (const r of results) process.stdout.write(`${JSON.stringify(r)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
