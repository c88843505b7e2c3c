/**
 * What the slot check and the booked-interval projection cost in the store, against a real Postgres
 * (issue 18): per slot check and per projection event, the statements sent, how many of them Postgres
 * planned, and the CPU time of this process and of the Postgres backend that ran them.
 *
 * Run: node --import tsx services/availability/bench/slot-check-store.bench.ts (Postgres running).
 * CHECKS (default 5000) and EVENTS (default 3000) set the loop lengths. Prints a JSON object.
 *
 * The data: a host working 07:00–22:00 every day with 3,000 confirmed Bookings in the 120 days
 * before the clock and 3,000 in the 120 days after it (plus cancelled tombstones), and 20 other hosts
 * of the workspace with 500 Bookings each. Each check asks for a random half hour inside working hours
 * in the next 90 days, so every check reads both the Event Type and the booked intervals.
 *
 * Every pool has one connection, so the backend's pid gives its CPU (/proc/<pid>/stat) and
 * pg_prepared_statements (per session) shows how often each named statement was planned. An unnamed
 * statement is parsed and planned at each execution.
 */
import type { Pool } from 'pg';
import { bookedIntervalFromEvent } from '../src/domain/booked-interval';
import { checkSlot, type SlotSources } from '../src/domain/find-slots';
import { loadSlotContext } from '../src/store/event-type.queries';
import { bookedIntervalsOverlapping, upsertBookedInterval } from '../src/store/projection.queries';
import { rng } from './fixture';
import { backendCpuUs, countedPool, databaseWithHost, totalSent, type HostIds, type HostSpec } from './store-fixture';

const CHECKS = Number(process.env.CHECKS ?? 5000);
const EVENTS = Number(process.env.EVENTS ?? 3000);
const WARMUP = 200;
const DAY_MS = 86_400_000;
const NOW = new Date('2026-06-01T00:00:00.000Z');
const log = (msg: string) => process.stderr.write(`[bench slot-check-store] ${msg}\n`);

/** The store as the service wires it (app.ts), on the given pool. */
function storeOn(pool: Pool) {
  const sources: SlotSources = {
    loadContext: (ws, id) => loadSlotContext(pool, ws, id),
    bookedIntervals: (ws, hostId, range, exclude) => bookedIntervalsOverlapping(pool, ws, hostId, range, exclude),
    calendarBusy: async () => [],
  };
  return { sources, upsert: (row: Parameters<typeof upsertBookedInterval>[1]) => upsertBookedInterval(pool, row) };
}

/** Named statements' plans so far on the pool's one connection. */
async function plans(pool: Pool): Promise<Map<string, { generic: number; custom: number }>> {
  const { rows } = await pool.query<{ name: string; generic_plans: string; custom_plans: string }>('SELECT name, generic_plans, custom_plans FROM pg_prepared_statements');
  return new Map(rows.map((r) => [r.name, { generic: Number(r.generic_plans), custom: Number(r.custom_plans) }]));
}

/** The host the calls ask about (store-fixture.ts databaseWithHost). */
const HOST: HostSpec = {
  timezone: 'Europe/Berlin',
  hours: { start: '07:00', end: '22:00' },
  eventType: { name: 'Intro', slug: 'intro', durationMinutes: 30, slotIntervalMinutes: 30, bufferBeforeMinutes: 10, bufferAfterMinutes: 10, maximumAdvanceMinutes: 525600, meetingType: 'video' },
};

async function seedBookings(admin: Pool, { ws, hostId, eventTypeId }: HostIds): Promise<void> {
  // The host: one Booking every 40 minutes around the clock, 3,000 before NOW and 3,000 after, every
  // tenth one cancelled; 20 other hosts of the workspace with 500 each.
  await admin.query(
    `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
     SELECT 'bkg_' || h || '_' || i, $1, CASE WHEN h = 0 THEN $2 ELSE 'hst_other_' || h END, $3, 1,
            CASE WHEN i % 10 = 0 THEN 'cancelled' ELSE 'confirmed' END, t, t + interval '30 minutes', t - interval '10 minutes', t + interval '40 minutes'
     FROM generate_series(0, 20) h,
          generate_series(CASE WHEN h = 0 THEN -3000 ELSE -250 END, CASE WHEN h = 0 THEN 2999 ELSE 249 END) i,
          LATERAL (SELECT $4::timestamptz + i * interval '57 minutes' AS t) x`,
    [ws, hostId, eventTypeId, NOW.toISOString()],
  );
}

async function main(): Promise<void> {
  const { tdb, ws, hostId, eventTypeId } = await databaseWithHost(HOST, seedBookings);
  try {
    const random = rng(7);

    // Slot checks.
    const checks = countedPool(tdb.urlFor('availability'), 'bench-slot-check');
    const { sources } = storeOn(checks.pool);
    const startAt = () => {
      const dayStart = NOW.getTime() + Math.floor(random() * 90) * DAY_MS;
      // 07:00–21:30 Berlin (UTC+2 in summer, +1 in winter: 06:00Z–19:00Z is inside either way), half hours.
      return new Date(dayStart + 6 * 3_600_000 + Math.floor(random() * 26) * 1_800_000);
    };
    const answers = { bookable: 0, unavailable: 0 };
    for (let i = 0; i < WARMUP; i++) await checkSlot(sources, ws, { eventTypeId, startAt: startAt() }, NOW);
    const cpu = await backendCpuUs(checks.pool);
    const plansBefore = await plans(checks.pool);
    checks.sent.clear();
    const pg0 = cpu.read();
    const node0 = process.cpuUsage();
    for (let i = 0; i < CHECKS; i++) {
      const answer = await checkSlot(sources, ws, { eventTypeId, startAt: startAt() }, NOW);
      if (answer.bookable) answers.bookable++;
      else if (answer.reason === 'slot_unavailable') answers.unavailable++;
      else throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    }
    const node = process.cpuUsage(node0);
    const pg = cpu.read() - pg0;
    const checkSent = new Map(checks.sent);
    const plansAfter = await plans(checks.pool);
    const checkFigures = figures(CHECKS, checkSent, plansBefore, plansAfter, node, pg);
    await checks.pool.end();

    // Projection events: a new Booking of the host (created), then the same at version 2 (cancelled).
    const events = countedPool(tdb.urlFor('availability'), 'bench-projection');
    const { upsert } = storeOn(events.pool);
    const booking = (i: number, version: number) => {
      const start = new Date(NOW.getTime() + 200 * DAY_MS + i * 3_600_000).toISOString();
      const end = new Date(NOW.getTime() + 200 * DAY_MS + i * 3_600_000 + 1_800_000).toISOString();
      const data = {
        booking: { id: `bkg_bench_${i}`, host_id: hostId, event_type_id: eventTypeId, version, status: version === 1 ? 'confirmed' : 'cancelled', start_at: start, end_at: end },
        internal: { blocked_from: start, blocked_to: end, invitation_id: null },
      };
      return bookedIntervalFromEvent(ws, data as unknown as Parameters<typeof bookedIntervalFromEvent>[1], null);
    };
    for (let i = 0; i < WARMUP; i++) await upsert(booking(-1 - i, 1));
    const ecpu = await backendCpuUs(events.pool);
    const eplansBefore = await plans(events.pool);
    events.sent.clear();
    const epg0 = ecpu.read();
    const enode0 = process.cpuUsage();
    for (let i = 0; i < EVENTS; i++) await upsert(booking(i >> 1, 1 + (i & 1)));
    const enode = process.cpuUsage(enode0);
    const epg = ecpu.read() - epg0;
    const eventSent = new Map(events.sent);
    const eplansAfter = await plans(events.pool);
    const eventFigures = figures(EVENTS, eventSent, eplansBefore, eplansAfter, enode, epg);
    await events.pool.end();

    process.stdout.write(`${JSON.stringify({ checks: { n: CHECKS, ...answers, ...checkFigures }, projection_events: { n: EVENTS, ...eventFigures } }, null, 1)}\n`);
  } finally {
    await tdb.drop();
  }
}

function figures(
  n: number,
  sent: Map<string, number>,
  before: Map<string, { generic: number; custom: number }>,
  after: Map<string, { generic: number; custom: number }>,
  node: NodeJS.CpuUsage,
  pgUs: number,
) {
  const per = (x: number) => Math.round((x / n) * 1000) / 1000;
  const statements: Record<string, number> = {};
  let planned = 0;
  for (const [name, count] of sent) {
    statements[name || '(unnamed)'] = per(count);
    if (!name) planned += count;
  }
  for (const [name, p] of after) {
    const b = before.get(name) ?? { generic: 0, custom: 0 };
    planned += p.custom - b.custom + (p.generic > 0 && b.generic === 0 ? 1 : 0);
  }
  return {
    statements_per_op: per(totalSent(sent)),
    by_statement: statements,
    plannings_per_op: per(planned),
    node_cpu_us_per_op: Math.round((node.user + node.system) / n),
    postgres_backend_cpu_us_per_op: Math.round(pgUs / n),
  };
}

main().catch((err) => {
  log(String(err?.stack ?? err));
  process.exit(1);
});
