/**
 * What the slot-checks call costs this process per checked start (issue 18): the batches the create
 * burst sends (tests-e2e/bench/system-create-burst.bench.ts: 32 connections, concurrent checks of one
 * host share one call, docs/booking.md "Slot checks share calls"), run through the domain's checkSlots
 * on the real store (Postgres), as the route runs them.
 *
 * Run: node --import tsx services/availability/bench/slot-checks.bench.ts (Postgres running).
 * STARTS (default 4000) checked starts per phase. BENCH_SRC=<dir> takes the service's src/ from
 * another directory (a copy of an older tree, for before/after pairs; it needs a node_modules link to
 * services/availability/node_modules next to it). Prints a JSON object.
 *
 * The data, as in the burst: a host in UTC available 00:00–24:00 every day, its calendar connected,
 * a 5-minute Event Type (5-minute grid, no buffers or notice, 90 days of advance), 3,000 confirmed
 * Bookings of the host at random 5-minute starts of days 1–88 (and 20 other hosts with 500 each), 200
 * calendar busy intervals. The checks walk the 5-minute starts from day 1 on in order, as the burst's
 * connections take consecutive free starts, in calls of 1–8 starts (seeded).
 *
 * Figures per checked start: CPU of this process (process.cpuUsage: the domain, the pg client, the
 * fake calendar's filter) and of the Postgres backend (/proc), statements sent; the process's CPU for
 * the same calls with the store's answers kept in memory (the domain alone, MEMORY_ROUNDS times); then, in a second pass
 * of the same calls under V8's precise coverage with call counts (node:inspector), how often each
 * function of src/ and of libs/contracts ran (the top ones). The coverage pass is not timed: counting slows V8 down.
 */
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Pool } from 'pg';
import type * as FindSlots from '../src/domain/find-slots';
import type * as EventTypeQueries from '../src/store/event-type.queries';
import type * as ProjectionQueries from '../src/store/projection.queries';
import type { Interval } from '../src/domain/slot-engine';
import { rng } from './fixture';
import { backendCpuUs, countedPool, databaseWithHost, totalSent, type HostIds, type HostSpec } from './store-fixture';

const STARTS = Number(process.env.STARTS ?? 4000);
const WARMUP_STARTS = 1000;
/** Rounds of the timed calls on the memory store (its figure is small, so it runs longer). */
const MEMORY_ROUNDS = Number(process.env.MEMORY_ROUNDS ?? 10);
const DAY_MS = 86_400_000;
const MIN_MS = 60_000;
const NOW = new Date('2026-06-01T00:00:00.000Z');
const SRC = resolve(process.env.BENCH_SRC ?? resolve(__dirname, '../src'));
const log = (msg: string) => process.stderr.write(`[bench slot-checks] ${msg}\n`);

async function load() {
  const url = (p: string) => pathToFileURL(resolve(SRC, p)).href;
  const findSlots = (await import(url('domain/find-slots.ts'))) as typeof FindSlots;
  const eventTypes = (await import(url('store/event-type.queries.ts'))) as typeof EventTypeQueries;
  const projection = (await import(url('store/projection.queries.ts'))) as typeof ProjectionQueries;
  return { checkSlots: findSlots.checkSlots, loadSlotContext: eventTypes.loadSlotContext, bookedIntervalsOverlapping: projection.bookedIntervalsOverlapping };
}

/** The host the calls ask about (store-fixture.ts databaseWithHost). */
const HOST: HostSpec = {
  timezone: 'UTC',
  hours: { start: '00:00', end: '24:00' },
  eventType: { name: 'Burst', slug: 'burst', durationMinutes: 5, slotIntervalMinutes: 5, bufferBeforeMinutes: 0, bufferAfterMinutes: 0, maximumAdvanceMinutes: 90 * 1440, meetingType: 'phone' },
};

async function seedBookings(admin: Pool, { ws, hostId, eventTypeId }: HostIds): Promise<void> {
  // 3,000 distinct random 5-minute starts of days 1–88 for the host; 500 for each of 20 others.
  const random = rng(11);
  const slots = (88 * 1440) / 5;
  const taken = new Set<number>();
  while (taken.size < 3000) taken.add(Math.floor(random() * slots));
  const starts = [...taken].map((k) => new Date(NOW.getTime() + DAY_MS + k * 5 * MIN_MS).toISOString());
  await admin.query(
    `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
     SELECT 'bkg_h_' || i, $1, $2, $3, 1, 'confirmed', t, t + interval '5 minutes', t, t + interval '5 minutes'
     FROM unnest($4::timestamptz[]) WITH ORDINALITY AS u(t, i)`,
    [ws, hostId, eventTypeId, starts],
  );
  await admin.query(
    `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
     SELECT 'bkg_' || h || '_' || i, $1, 'hst_other_' || h, $2, 1, 'confirmed', t, t + interval '5 minutes', t, t + interval '5 minutes'
     FROM generate_series(1, 20) h, generate_series(0, 499) i, LATERAL (SELECT $3::timestamptz + interval '1 day' + i * interval '4 hours' AS t) x`,
    [ws, eventTypeId, NOW.toISOString()],
  );
}

/** 200 calendar busy intervals of 15–90 minutes over days 1–88, answered per range by a binary search. */
function fakeCalendar(): (range: Interval) => Interval[] {
  const random = rng(5);
  const busy = Array.from({ length: 200 }, () => {
    const start = NOW.getTime() + DAY_MS + Math.floor(random() * 88 * 1440) * MIN_MS;
    return { start, end: start + (15 + Math.floor(random() * 76)) * MIN_MS };
  }).sort((a, b) => a.start - b.start);
  return (range) => {
    let lo = 0;
    let hi = busy.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (busy[mid]!.start < range.start - 90 * MIN_MS) lo = mid + 1;
      else hi = mid;
    }
    const out: Interval[] = [];
    for (let i = lo; i < busy.length && busy[i]!.start < range.end; i++) if (busy[i]!.end > range.start) out.push(busy[i]!);
    return out;
  };
}

/**
 * The store's answers for these calls, kept in memory: the context as pg gives it (a fresh object, the
 * schedule parsed from its JSON text, every call), the host's booked intervals by a binary search.
 */
async function memoryStore(db: FindSlots.SlotSources, ws: string, hostId: string, eventTypeId: string): Promise<FindSlots.SlotSources> {
  const ctx = (await db.loadContext(ws, eventTypeId))!;
  const text = JSON.stringify(ctx);
  const booked = (await db.bookedIntervals(ws, hostId, { start: 0, end: NOW.getTime() + 400 * DAY_MS })).sort((a, b) => a.start - b.start);
  return {
    loadContext: async () => {
      const parsed = JSON.parse(text) as FindSlots.SlotContext;
      return { ...parsed, eventType: { ...parsed.eventType, createdAt: new Date(parsed.eventType.createdAt), updatedAt: new Date(parsed.eventType.updatedAt) } };
    },
    bookedIntervals: async (_w, _h, range) => {
      let lo = 0;
      let hi = booked.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (booked[mid]!.end <= range.start) lo = mid + 1;
        else hi = mid;
      }
      const out: Interval[] = [];
      for (let i = lo; i < booked.length && booked[i]!.start < range.end; i++) out.push({ start: booked[i]!.start, end: booked[i]!.end });
      return out;
    },
    calendarBusy: db.calendarBusy,
  };
}

/** The calls: consecutive 5-minute starts from day 1 on, 1–8 per call. */
function callsOf(from: number, starts: number, seed: number): Date[][] {
  const random = rng(seed);
  const calls: Date[][] = [];
  let k = from;
  while (k < from + starts) {
    const size = Math.min(1 + Math.floor(random() * 8), from + starts - k);
    calls.push(Array.from({ length: size }, (_, i) => new Date(NOW.getTime() + DAY_MS + (k + i) * 5 * MIN_MS)));
    k += size;
  }
  return calls;
}

async function main(): Promise<void> {
  const { checkSlots, loadSlotContext, bookedIntervalsOverlapping } = await load();
  log(`src: ${SRC}`);
  const { tdb, ws, hostId, eventTypeId } = await databaseWithHost(HOST, seedBookings);
  try {
    const { pool, sent } = countedPool(tdb.urlFor('availability'), 'bench-slot-checks');
    const calendar = fakeCalendar();
    const sources: FindSlots.SlotSources = {
      loadContext: (w, id) => loadSlotContext(pool, w, id),
      bookedIntervals: (w, h, range, exclude) => bookedIntervalsOverlapping(pool, w, h, range, exclude),
      calendarBusy: async (_w, _h, range) => calendar(range),
    };
    const answers = { bookable: 0, slot_unavailable: 0 };
    const run = async (calls: Date[][], src = sources) => {
      for (const call of calls) {
        const outcomes = await checkSlots(src, ws, call.map((startAt) => ({ eventTypeId, startAt })), NOW);
        for (const o of outcomes) {
          if (o instanceof Error || (!o.bookable && o.reason !== 'slot_unavailable')) throw new Error(`unexpected answer ${JSON.stringify(o)}`);
          if (o.bookable) answers.bookable++;
          else answers.slot_unavailable++;
        }
      }
    };

    await run(callsOf(0, WARMUP_STARTS, 1));
    const backendUs = (await backendCpuUs(pool)).read;
    const calls = callsOf(WARMUP_STARTS, STARTS, 2);
    answers.bookable = answers.slot_unavailable = 0;
    sent.clear();
    const pg0 = backendUs();
    const cpu0 = process.cpuUsage();
    await run(calls);
    const cpu = process.cpuUsage(cpu0);
    const pgUs = backendUs() - pg0;
    const statements = totalSent(sent);
    const timed = { ...answers };

    // The same calls on the store's answers kept in memory: the domain's own CPU, without pg and the socket.
    const memory = await memoryStore(sources, ws, hostId, eventTypeId);
    await run(callsOf(0, WARMUP_STARTS, 1), memory);
    answers.bookable = answers.slot_unavailable = 0;
    const mem0 = process.cpuUsage();
    for (let i = 0; i < MEMORY_ROUNDS; i++) await run(calls, memory);
    const mem = process.cpuUsage(mem0);
    if (answers.bookable !== timed.bookable * MEMORY_ROUNDS) throw new Error('the memory store answered differently');

    // Call counts: the same number of starts again, further on, under precise coverage.
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // resets the counts
    await run(callsOf(WARMUP_STARTS + STARTS, STARTS, 3));
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    await session.post('Debugger.enable');
    const counted = [pathToFileURL(SRC).href, pathToFileURL(resolve(__dirname, '../../../libs/contracts/src')).href];
    const counts = new Map<string, number>();
    for (const script of result) {
      if (!counted.some((dir) => script.url.startsWith(`${dir}/`))) continue;
      const file = script.url.replace(/^.*\//, '').replace(/\.ts$/, '');
      const { scriptSource } = await session.post('Debugger.getScriptSource', { scriptId: script.scriptId });
      for (const fn of script.functions) {
        const range = fn.ranges[0];
        // Not the module's export accessors (`() => name`, `() => from[key]`: the CommonJS wrapper tsx compiles to).
        if (!range || /^\(\)\s*=>\s*[\w$]+(\[[\w$]+\])?$/.test(scriptSource.slice(range.startOffset, range.endOffset))) continue;
        const name = `${file}:${fn.functionName || '(anonymous)'}`;
        counts.set(name, (counts.get(name) ?? 0) + range.count);
      }
    }
    session.disconnect();
    const per = (x: number) => Math.round((x / STARTS) * 100) / 100;
    const top = [...counts].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).slice(0, 30);
    process.stdout.write(
      `${JSON.stringify(
        {
          src: SRC,
          starts: STARTS,
          calls: calls.length,
          answers: timed,
          node_cpu_us_per_start: Math.round((cpu.user + cpu.system) / STARTS),
          memory_store_node_cpu_us_per_start: Math.round(((mem.user + mem.system) / STARTS / MEMORY_ROUNDS) * 10) / 10,
          postgres_backend_cpu_us_per_start: Math.round(pgUs / STARTS),
          statements_per_start: per(statements),
          calls_per_start: Object.fromEntries(top.map(([name, n]) => [name, per(n)])),
        },
        null,
        1,
      )}\n`,
    );
    await pool.end();
  } finally {
    await tdb.drop();
  }
}

main().catch((err) => {
  log(String(err?.stack ?? err));
  process.exit(1);
});
