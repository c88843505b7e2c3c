/**
 * Booking's own share of a create and of a calendar result, counted (issue 18), for before/after comparisons
 * of booking's code on a shared machine. Not part of `pnpm bench`.
 * Run: `node --import tsx services/booking/bench/share.bench.ts` (BENCH_DURATION_S, default 10;
 * BENCH_SLOT_DELAY_MS, default 60; BENCH_RESULT_RATE, default 200/s; BENCH_PROFILE_DIR for a CPU profile;
 * BENCH_NO_BUILD=1 to reuse the bundle; BENCH_BUNDLE=<path> runs another build of booking's bundle, e.g. a copy
 * of services/booking/dist/main.js from before a change, for A B A B comparisons). Prints one JSON object on
 * its last line.
 *
 * Booking runs as `npm start` and the whole-system benches run it (the esbuild bundle, NODE_ENV development,
 * LOG_LEVEL info), alone on its own database and AMQP prefix; availability is an in-process stub answering
 * "bookable" after BENCH_SLOT_DELAY_MS, so creates arrive at about the whole-system burst's rate and its slot
 * checks and group commits batch about as much (not at the stubbed locator's 1,000+/s).
 * 1. Creates: 32 closed-loop clients straight to booking (the gateway's credential), each a new slot with
 *    its own Idempotency-Key, for BENCH_DURATION_S; the window ends when every booking.created is published.
 * 2. Calendar results: a calendar.synced for each of those Bookings (as calendar-sync sends it), at
 *    BENCH_RESULT_RATE per second; the window ends when every calendar.created is published.
 * Per create and per result: booking's CPU (user + system, /proc), its read and write system calls, its
 * voluntary context switches, log lines; Postgres commits and the CPU of this database's backends; for the
 * results, the share of Booking updates Postgres made HOT (heap-only: on the row's own page, no index entries).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import { createTestDatabase, freePort, testAmqp, waitFor, type TestDatabase } from '@sched/testing';
import { bookable, startAvailabilityStub } from '../test/support/availability-stub';
import { buildBundles, cleanupBookingBus, createBody, gatewayCredential, procCpuMs, procIo, runMain, startBookingBundle, type BookingProcess } from './booking-bench';
import { percentile, runClosedLoop } from './http-load';

const CLIENTS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const SLOT_DELAY_MS = Number(process.env.BENCH_SLOT_DELAY_MS ?? 60);
const RESULT_RATE = Number(process.env.BENCH_RESULT_RATE ?? 200);
const WARMUP_S = 2;

const log = (msg: string) => process.stderr.write(`[bench share] ${msg}\n`);
/** The monotonic clock in µs, as a CPU profile's timestamps (scripts/cpu-profile-report.mjs cuts a profile to a window). */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

interface Counters {
  cpuMs: number;
  syscr: number;
  syscw: number;
  voluntarySwitches: number;
  logLines: number;
  commits: number;
  pgCpuMs: number;
}

function voluntarySwitches(pid: number): number {
  return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** This database's backends (booking's pool and its LISTEN connection), CPU from /proc; a backend gone since is not counted. */
async function pgCounters(db: TestDatabase): Promise<{ commits: number; backends: Map<number, number> }> {
  const stats = await db.adminPool.query<{ commits: string }>('SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()');
  const pids = await db.adminPool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name NOT LIKE 'test-admin%'");
  const backends = new Map<number, number>();
  for (const { pid } of pids.rows) {
    try {
      backends.set(pid, procCpuMs(pid));
    } catch {
      // ended meanwhile
    }
  }
  return { commits: Number(stats.rows[0]!.commits), backends };
}

async function snapshot(booking: BookingProcess, db: TestDatabase): Promise<Counters & { backends: Map<number, number> }> {
  // pg_stat_database is updated when a backend reports its counters (at most every 500 ms by default on 15).
  const pg = await pgCounters(db);
  const pid = booking.proc.pid!;
  return { cpuMs: procCpuMs(pid), ...procIo(pid), voluntarySwitches: voluntarySwitches(pid), logLines: booking.lines(), commits: pg.commits, pgCpuMs: 0, backends: pg.backends };
}

function perUnit(a: Awaited<ReturnType<typeof snapshot>>, b: Awaited<ReturnType<typeof snapshot>>, units: number) {
  let pgCpu = 0;
  for (const [pid, ms] of b.backends) if (a.backends.has(pid)) pgCpu += ms - a.backends.get(pid)!;
  const r = (v: number, digits = 3) => Math.round((v / units) * 10 ** digits) / 10 ** digits;
  return {
    units,
    booking_cpu_ms: r(b.cpuMs - a.cpuMs),
    booking_syscalls_read: r(b.syscr - a.syscr, 2),
    booking_syscalls_write: r(b.syscw - a.syscw, 2),
    booking_voluntary_switches: r(b.voluntarySwitches - a.voluntarySwitches, 2),
    booking_log_lines: r(b.logLines - a.logLines, 2),
    postgres_commits: r(b.commits - a.commits, 2),
    postgres_backend_cpu_ms: r(pgCpu),
  };
}

async function outboxDrained(db: TestDatabase, type: string, count: number): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await db.adminPool.query<{ n: number }>('SELECT count(*)::int AS n FROM booking.outbox WHERE type = $1 AND published_at IS NOT NULL', [type]);
      return rows[0]!.n >= count;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

async function main(): Promise<void> {
  if (!process.env.BENCH_NO_BUILD) buildBundles(log);
  const db = await createTestDatabase({ services: ['booking'] });
  const bus = testAmqp();
  const stub = await startAvailabilityStub((call) => ({ ...bookable()(call), delayMs: SLOT_DELAY_MS }));
  let booking: BookingProcess | undefined;
  let conn: amqp.ChannelModel | undefined;
  try {
    booking = await startBookingBundle({ port: await freePort(), db, bus, availabilityUrl: stub.url, env: { NODE_ENV: 'development' } });
    conn = await amqp.connect(bus.url);
    const url = booking.url;
    const workspaceId = id('wsp');
    const auth = await gatewayCredential(workspaceId, id('key'));
    let i = 0;
    const next = () => {
      i += 1;
      return { path: '/v1/bookings', body: createBody(i), headers: { ...auth, 'idempotency-key': `share-${i}` } };
    };

    log(`warm-up ${WARMUP_S} s`);
    const warm = await runClosedLoop({ url, clients: CLIENTS, durationS: WARMUP_S, expectStatus: 201, next });
    await outboxDrained(db, 'booking.created', warm.ok);

    log(`creates: ${CLIENTS} clients for ${DURATION_S} s, slot checks answered after ${SLOT_DELAY_MS} ms`);
    const callsBefore = stub.requests.length;
    const a = await snapshot(booking, db);
    const createsFrom = monotonicUs();
    const burst = await runClosedLoop({ url, clients: CLIENTS, durationS: DURATION_S, expectStatus: 201, next });
    await outboxDrained(db, 'booking.created', warm.ok + burst.ok);
    const b = await snapshot(booking, db);
    const { rows: batchRows } = await db.adminPool.query<{ n: number; tx: number }>('SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS tx FROM booking.bookings');
    // The relay marks the rows of one round in one transaction: events per round are rows per marking transaction.
    const { rows: roundRows } = await db.adminPool.query<{ n: number; tx: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS tx FROM booking.outbox WHERE type = 'booking.created'",
    );
    const creates = {
      per_s: Math.round((burst.ok / burst.durationS) * 10) / 10,
      p50_ms: Math.round(percentile(burst.latenciesMs, 50)),
      p99_ms: Math.round(percentile(burst.latenciesMs, 99)),
      other_statuses: burst.otherStatuses,
      errors: burst.errors,
      mean_create_batch: Math.round((batchRows[0]!.n / batchRows[0]!.tx) * 10) / 10,
      mean_relay_round: Math.round((roundRows[0]!.n / roundRows[0]!.tx) * 10) / 10,
      slot_check_calls_per_create: Math.round(((stub.requests.length - callsBefore) / burst.ok) * 100) / 100,
      ...perUnit(a, b, burst.ok),
      window_us: [createsFrom, monotonicUs()],
    };
    log(JSON.stringify(creates));

    log(`calendar results: a calendar.synced for each of the ${warm.ok + burst.ok} Bookings at ${RESULT_RATE}/s`);
    const { rows: booked } = await db.adminPool.query<{ id: string }>('SELECT id FROM booking.bookings ORDER BY created_at');
    const ch = await conn.createConfirmChannel();
    const exchange = `${bus.prefix}scheduling.events`;
    const c = await snapshot(booking, db);
    const resultsFrom = monotonicUs();
    const started = Date.now();
    for (let k = 0; k < booked.length; k++) {
      const wait = started + (k * 1000) / RESULT_RATE - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const envelope = {
        id: id('wev'),
        type: 'calendar.synced',
        occurred_at: new Date().toISOString(),
        workspace_id: workspaceId,
        schema_version: 1,
        data: { booking_id: booked[k]!.id, booking_version: 1, status: 'synced', join_url: `https://meet.example.com/${k}`, event_uid: `${booked[k]!.id}@bench` },
      };
      ch.publish(exchange, 'calendar.synced', Buffer.from(JSON.stringify(envelope)), { persistent: true, messageId: envelope.id, type: envelope.type, contentType: 'application/json' });
    }
    await ch.waitForConfirms();
    await outboxDrained(db, 'calendar.created', booked.length);
    const d = await snapshot(booking, db);
    // Updates of Bookings that stayed on their page (HOT): no new index entries, the exclusion constraint not checked again.
    const { rows: upd } = await db.adminPool.query<{ upd: string; hot: string }>(
      "SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE schemaname = 'booking' AND relname = 'bookings'",
    );
    const results = {
      ...perUnit(c, d, booked.length),
      booking_updates_hot_share: Math.round((Number(upd[0]!.hot) / Math.max(1, Number(upd[0]!.upd))) * 100) / 100,
      window_us: [resultsFrom, monotonicUs()],
    };
    log(JSON.stringify(results));
    process.stdout.write(`${JSON.stringify({ name: 'booking-share', clients: CLIENTS, duration_s: DURATION_S, slot_delay_ms: SLOT_DELAY_MS, result_rate: RESULT_RATE, creates, results })}\n`);
  } finally {
    await conn?.close().catch(() => undefined);
    await booking?.stop();
    await stub.close();
    await db.drop();
    await cleanupBookingBus(bus);
  }
}

runMain(main);
