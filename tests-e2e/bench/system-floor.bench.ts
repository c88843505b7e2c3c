/**
 * Issue 18 §2, the floor under the whole-system figures: what RabbitMQ and Postgres alone cost for the
 * messages and commits one Booking needs in this design, with none of our code doing anything else.
 * Run: node --import tsx tests-e2e/bench/system-floor.bench.ts → .data/bench/system-floor.json
 *
 * - Broker: the topology of the system (durable topic exchange, one quorum queue per service, bound as
 *   the services bind them) and, per Booking, the three messages the system publishes with publisher
 *   confirms (booking.created.no_invitation → availability, calendar-sync, webhook-dispatch;
 *   calendar.synced → booking; calendar.created → webhook-dispatch), each delivered and acknowledged by a
 *   consumer (prefetch 10) that does nothing else: 3 publishes and 5 deliveries per Booking, bodies of the
 *   system's size, at BENCH_RATE Bookings/s (default 150) for BENCH_DURATION_S (default 10).
 * - Postgres: one-row durable commits (INSERT in autocommit, 8 connections, BENCH_DURATION_S), the cheapest
 *   write transaction there is; the design commits TRANSACTIONS_PER_BOOKING times per Booking (listed below).
 *
 * Figures: CPU per Booking of RabbitMQ (its beam and helpers) and of this process's client side, and
 * Postgres CPU per commit and per Booking's commits; their sum is a lower bound on the CPU target
 * (our six services + Postgres + RabbitMQ), before any service runs a line of its own.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import amqp from 'amqplib';
import pg from 'pg';
import { createTestDatabase, testAmqp } from '@sched/testing';
import { LOAD_GENERATOR, machineCpu, machineFacts, progress, readCpuTimes, round, runBench, stealPct, stealPctOver, stealText, writeFigures, type CpuTimes } from './harness';

const RATE_PER_S = Number(process.env.BENCH_RATE ?? 150);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const log = progress('system-floor');

/**
 * Commits per Booking in the system as built (statement log of a sustained run, docs/benchmarks.md):
 * create (1), booking's outbox relay for booking.created and calendar.created (2), availability's
 * projection upsert (1), calendar-sync's consumer transaction (1) and its relay for calendar.synced (1),
 * booking's calendar-result transaction (1), webhook-dispatch's ingest of two events (2) and the two
 * deliveries' results (2), the gateway's rate-limit counter (1).
 */
const TRANSACTIONS_PER_BOOKING = 12;

/**
 * [routing key, queues it reaches] for the three messages of one Booking (made without an invitation: its
 * booking.created is routed past invitation's queue, libs/contracts eventRoutingKey).
 */
const MESSAGES: Array<[string, string[]]> = [
  ['booking.created.no_invitation', ['availability', 'calendar-sync', 'webhook-dispatch']],
  ['calendar.synced', ['booking']],
  ['calendar.created', ['webhook-dispatch']],
];
const DELIVERIES_PER_BOOKING = MESSAGES.reduce((n, [, queues]) => n + queues.length, 0);

/** CPU ms so far of one process group on the machine (harness machineCpu: Postgres, RabbitMQ, this process); no system of ours runs here. */
const groupCpuMs = (group: string) => machineCpu({ processes: [], radicale: { dataDir: '/nonexistent' } }).groups.get(group) ?? 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The machine's CPU times at the start and end of each measured interval: the steal over them. */
const measured: Array<{ before: CpuTimes; after: CpuTimes }> = [];

async function brokerFloor(): Promise<Record<string, number>> {
  const { url } = testAmqp();
  const prefix = `floor-${randomBytes(4).toString('hex')}.`;
  const conn = await amqp.connect(url);
  const pub = await conn.createConfirmChannel();
  const exchange = `${prefix}scheduling.events`;
  await pub.assertExchange(exchange, 'topic', { durable: true });
  const queues = [...new Set(MESSAGES.flatMap(([, qs]) => qs))];
  let delivered = 0;
  const consumers = [];
  for (const q of queues) {
    const name = `${prefix}${q}`;
    const ch = await conn.createChannel();
    await ch.assertQueue(name, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (const [key, qs] of MESSAGES) if (qs.includes(q)) await ch.bindQueue(name, exchange, key);
    await ch.prefetch(10);
    await ch.consume(name, (msg) => {
      if (!msg) return;
      delivered += 1;
      ch.ack(msg);
    });
    consumers.push({ ch, name });
  }
  // A booking.created envelope of the system is about 1.6 KB of JSON; the calendar ones are smaller.
  const bodies = [Buffer.alloc(1600, 'x'), Buffer.alloc(400, 'x'), Buffer.alloc(1600, 'x')];
  const publishBooking = () =>
    Promise.all(
      MESSAGES.map(
        ([key], i) =>
          new Promise<void>((resolve, reject) =>
            pub.publish(exchange, key, bodies[i]!, { persistent: true, contentType: 'application/json' }, (err) => (err ? reject(err) : resolve())),
          ),
      ),
    );
  // Warm-up, then the measured interval: Bookings on a fixed schedule.
  for (let i = 0; i < 50; i++) await publishBooking();
  await sleep(1000);
  const total = RATE_PER_S * DURATION_S;
  const expected = delivered + total * DELIVERIES_PER_BOOKING;
  const before = { rmq: groupCpuMs('rabbitmq'), self: groupCpuMs(LOAD_GENERATOR), at: Date.now(), times: readCpuTimes() };
  const started = Date.now();
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE_PER_S;
    if (due > Date.now()) await sleep(due - Date.now());
    inFlight.push(publishBooking());
  }
  await Promise.all(inFlight);
  while (delivered < expected) await sleep(20);
  const after = { rmq: groupCpuMs('rabbitmq'), self: groupCpuMs(LOAD_GENERATOR), at: Date.now(), times: readCpuTimes() };
  measured.push({ before: before.times, after: after.times });
  for (const c of consumers) await c.ch.deleteQueue(c.name).catch(() => undefined);
  await pub.deleteExchange(exchange).catch(() => undefined);
  await conn.close();
  return {
    bookings: total,
    achieved_per_s: round(total / ((after.at - before.at) / 1000), 1),
    rabbitmq_cpu_ms_per_booking: round((after.rmq - before.rmq) / total, 3),
    client_cpu_ms_per_booking: round((after.self - before.self) / total, 3),
    steal_pct: stealPct(before.times, after.times),
  };
}

async function postgresFloor(): Promise<Record<string, number>> {
  const db = await createTestDatabase({ services: [] });
  const pool = new pg.Pool({ connectionString: db.adminUrl, max: 8 });
  // An idle client's connection ended from outside (a server restart, an operator) is an error on the
  // pool; without a listener node ends the process with a stack: report it in one line instead.
  pool.on('error', (err) => log(`postgres: a pooled connection ended (${err.message}); the figures of this run are incomplete`));
  try {
    await pool.query('CREATE TABLE floor_rows (id bigserial PRIMARY KEY, body text NOT NULL)');
    const body = 'x'.repeat(400);
    const insert = () => pool.query('INSERT INTO floor_rows (body) VALUES ($1)', [body]);
    for (let i = 0; i < 200; i++) await insert();
    let commits = 0;
    const before = { pg: groupCpuMs('postgres'), self: groupCpuMs(LOAD_GENERATOR), times: readCpuTimes() };
    const until = Date.now() + DURATION_S * 1000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          await insert();
          commits += 1;
        }
      }),
    );
    const after = { pg: groupCpuMs('postgres'), self: groupCpuMs(LOAD_GENERATOR), times: readCpuTimes() };
    measured.push({ before: before.times, after: after.times });
    const perCommit = (after.pg - before.pg) / commits;
    return {
      commits,
      commits_per_s: round(commits / DURATION_S, 0),
      postgres_cpu_ms_per_commit: round(perCommit, 3),
      client_cpu_ms_per_commit: round((after.self - before.self) / commits, 3),
      transactions_per_booking: TRANSACTIONS_PER_BOOKING,
      postgres_cpu_ms_per_booking: round(perCommit * TRANSACTIONS_PER_BOOKING, 3),
      steal_pct: stealPct(before.times, after.times),
    };
  } finally {
    await pool.end();
    await db.drop();
  }
}

runBench(log, async () => {
  const loadBefore = loadavg();
  log(`broker: ${MESSAGES.length} messages and ${DELIVERIES_PER_BOOKING} deliveries per Booking on quorum queues, ${RATE_PER_S}/s for ${DURATION_S} s`);
  const broker = await brokerFloor();
  log(`postgres: one-row durable commits, 8 connections, ${DURATION_S} s`);
  const postgres = await postgresFloor();
  const floor = round(broker.rabbitmq_cpu_ms_per_booking! + postgres.postgres_cpu_ms_per_booking!, 2);
  const steal = stealPctOver(measured);
  log(`floor ${floor} ms per Booking; ${stealText(steal)} (broker ${broker.steal_pct} %, postgres ${postgres.steal_pct} %)`);
  writeFigures('system-floor.json', {
    benchmark: 'system-floor',
    machine: machineFacts(loadBefore, steal),
    scenario: { rate_per_s: RATE_PER_S, duration_s: DURATION_S },
    broker,
    postgres,
    floor_ms_per_booking_rabbitmq_postgres: floor,
    target_ms_per_booking: 8,
  });
});
