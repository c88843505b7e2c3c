/**
 * The hot path's named statements (store/prepared.ts) against the drizzle queries they replaced, on
 * varied data in a real database: same answers, same projection rows. And their generic plans: the
 * statement pool plans each once per connection (force_generic_plan), so the generic plan must be the
 * good one on a realistic table.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq, gt, lt, ne, sql } from 'drizzle-orm';
import type { Pool, PoolClient } from 'pg';
import { createDb, createPool, migrateService, type Db } from '@sched/db';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import { rng } from '../bench/fixture';
import type { BookedInterval } from '../src/domain/booked-interval';
import type { SlotContext } from '../src/domain/find-slots';
import type { Interval } from '../src/domain/slot-engine';
import { loadSlotContext, SLOT_CONTEXT } from '../src/store/event-type.queries';
import type { NamedStatement, StatementPool } from '../src/store/prepared';
import {
  BOOKED_OVERLAPPING,
  bookedIntervalsOverlapping,
  latestPerBooking,
  UPSERT_BOOKED_INTERVAL,
  UPSERT_BOOKED_INTERVALS,
  upsertBookedInterval,
  upsertBookedIntervals,
} from '../src/store/projection.queries';
import { bookedIntervals, calendarConnections, eventTypes, hosts, LONGEST_BLOCKED_HOURS, schedules } from '../src/store/schema';

let tdb: TestDatabase;
let db: Db;
let admin: Pool;
/** As app.ts opens it. */
let statements: Pool;

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['availability'] });
  db = createDb(tdb.pool('availability'));
  admin = tdb.adminPool;
  statements = createPool(tdb.urlFor('availability'), { max: 1, genericPlans: true, applicationName: 'test-statements', logger: { error: () => undefined } });
});

afterAll(async () => {
  await statements?.end();
  await tdb?.drop();
});

// ---- The drizzle queries the named statements replaced (the oracle) ----

const viewColumns = {
  id: eventTypes.id,
  workspaceId: eventTypes.workspaceId,
  hostId: eventTypes.hostId,
  name: eventTypes.name,
  description: eventTypes.description,
  slug: eventTypes.slug,
  durationMinutes: eventTypes.durationMinutes,
  slotIntervalMinutes: eventTypes.slotIntervalMinutes,
  bufferBeforeMinutes: eventTypes.bufferBeforeMinutes,
  bufferAfterMinutes: eventTypes.bufferAfterMinutes,
  minimumNoticeMinutes: eventTypes.minimumNoticeMinutes,
  maximumAdvanceMinutes: eventTypes.maximumAdvanceMinutes,
  meetingType: eventTypes.meetingType,
  status: eventTypes.status,
  access: eventTypes.access,
  createdAt: eventTypes.createdAt,
  updatedAt: eventTypes.updatedAt,
  calendarStatus: calendarConnections.status,
  hostHasAvailability: sql<boolean>`coalesce(${schedules.hasAvailability}, false)`,
};

async function drizzleSlotContext(workspaceId: string, eventTypeId: string): Promise<SlotContext | null> {
  const [row] = await db
    .select({ ...viewColumns, hostTimezone: hosts.timezone, weekly: schedules.weekly, overrides: schedules.overrides })
    .from(eventTypes)
    .innerJoin(hosts, and(eq(hosts.id, eventTypes.hostId), eq(hosts.workspaceId, eventTypes.workspaceId)))
    .leftJoin(calendarConnections, and(eq(calendarConnections.hostId, eventTypes.hostId), eq(calendarConnections.workspaceId, eventTypes.workspaceId)))
    .leftJoin(schedules, and(eq(schedules.hostId, eventTypes.hostId), eq(schedules.workspaceId, eventTypes.workspaceId)))
    .where(and(eq(eventTypes.workspaceId, workspaceId), eq(eventTypes.id, eventTypeId)))
    .limit(1);
  if (!row) return null;
  const { hostTimezone, weekly, overrides, ...view } = row;
  const eventType = { ...view, calendarStatus: view.calendarStatus ?? null, hostHasAvailability: view.hostHasAvailability === true } as SlotContext['eventType'];
  return { eventType, hostTimezone, schedule: { weekly: weekly ?? {}, overrides: overrides ?? [] } };
}

const epochMs = (column: typeof bookedIntervals.blockedFrom) => sql`floor(extract(epoch from ${column}) * 1000)::bigint`;

async function drizzleBookedOverlapping(workspaceId: string, hostId: string, range: Interval, exclude?: string): Promise<Interval[]> {
  const [row] = await db
    .select({ intervals: sql<Array<[number, number]>>`coalesce(json_agg(json_build_array(${epochMs(bookedIntervals.blockedFrom)}, ${epochMs(bookedIntervals.blockedTo)})), '[]'::json)` })
    .from(bookedIntervals)
    .where(
      and(
        eq(bookedIntervals.workspaceId, workspaceId),
        eq(bookedIntervals.hostId, hostId),
        eq(bookedIntervals.status, 'confirmed'),
        gt(bookedIntervals.blockedTo, new Date(range.start)),
        lt(bookedIntervals.blockedFrom, new Date(range.end)),
        ne(bookedIntervals.bookingId, exclude ?? ''),
      ),
    );
  return (row?.intervals ?? []).map(([start, end]) => ({ start, end }));
}

async function drizzleUpsert(row: BookedInterval): Promise<void> {
  await db
    .insert(bookedIntervals)
    .values(row)
    .onConflictDoUpdate({
      target: bookedIntervals.bookingId,
      set: {
        version: sql`excluded.version`,
        status: sql`excluded.status`,
        hostId: sql`excluded.host_id`,
        eventTypeId: sql`excluded.event_type_id`,
        startAt: sql`excluded.start_at`,
        endAt: sql`excluded.end_at`,
        blockedFrom: sql`excluded.blocked_from`,
        blockedTo: sql`excluded.blocked_to`,
        updatedAt: sql`now()`,
      },
      setWhere: sql`${bookedIntervals.version} < excluded.version AND ${bookedIntervals.workspaceId} = excluded.workspace_id`,
    });
}

/** The plan the statement pool's sessions use: the generic one (the pool forces it), with the parameters as $n. */
async function genericPlanOn(pool: Pool, statement: NamedStatement, values: unknown[]): Promise<string> {
  const client = await pool.connect();
  try {
    expect((await client.query(`SELECT current_setting('plan_cache_mode') AS m`)).rows[0].m).toBe('force_generic_plan');
    await client.query(`PREPARE explain_${statement.name} AS ${statement.text}`);
    const { rows } = await client.query(`EXPLAIN (COSTS OFF) EXECUTE explain_${statement.name}(${values.map((v) => `'${String(v)}'`).join(', ')})`);
    const plans = await client.query(`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1`, [`explain_${statement.name}`]);
    expect(plans.rows).toEqual([{ generic: 1, custom: 0 }]);
    await client.query(`DEALLOCATE explain_${statement.name}`);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    client.release();
  }
}

/**
 * Shared buffers (pages) the generic plan of the booked-interval read touches for each window [start, start + length)
 * of the host, by EXPLAIN (ANALYZE, BUFFERS), and how many ranges it found in all.
 */
async function pagesPerReadOn(pool: Pool, statement: NamedStatement, ws: string, host: string, starts: number[], length: number): Promise<{ pages: number[]; found: number }> {
  const client = await pool.connect();
  try {
    await client.query(`PREPARE pages_${statement.name} AS ${statement.text}`);
    const pages: number[] = [];
    let found = 0;
    for (const start of starts) {
      const args = [ws, host, new Date(start).toISOString(), new Date(start + length).toISOString(), ''].map((v) => `'${v}'`).join(', ');
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE pages_${statement.name}(${args})`);
      const top = rows.map((r) => r['QUERY PLAN'] as string).find((line) => line.trim().startsWith('Buffers:')) ?? '';
      pages.push(Number(/hit=(\d+)/.exec(top)?.[1] ?? 0) + Number(/read=(\d+)/.exec(top)?.[1] ?? 0));
      found += (await client.query(`EXECUTE pages_${statement.name}(${args})`)).rows[0].intervals.length;
    }
    const plans = await client.query(`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1`, [`pages_${statement.name}`]);
    expect(plans.rows[0].custom).toBe(0);
    await client.query(`DEALLOCATE pages_${statement.name}`);
    return { pages, found };
  } finally {
    client.release();
  }
}

/** The booked-interval read's generic plan: both arms on their index, the window's bounds in the range scan's condition. */
function expectBookedOverlappingPlan(plan: string): void {
  expect(plan).toMatch(/Index Scan using booked_intervals_host_from_idx on booked_intervals|Bitmap Index Scan on booked_intervals_host_from_idx/);
  expect(plan).toContain(
    "Index Cond: ((workspace_id = $1) AND (host_id = $2) AND (blocked_from > ($3 - '72:00:00'::interval)) AND (blocked_from < $4) AND (blocked_to > $3))",
  );
  expect(plan).toMatch(/Index Scan using booked_intervals_host_long_idx on booked_intervals|Bitmap Index Scan on booked_intervals_host_long_idx/);
  expect(plan).not.toContain('Seq Scan');
  expect(plan).not.toContain('booked_intervals_pkey');
}

// ---- Data ----

const WS = ['wsp_prep_a', 'wsp_prep_b'];
const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const MIN = 60_000;
const byStart = (a: Interval, b: Interval) => a.start - b.start || a.end - b.end;

async function addHost(id: string, ws: string, o: { timezone?: string; schedule?: { weekly: unknown; overrides: unknown; has: boolean } | null; calendar?: string | null } = {}) {
  await admin.query(`INSERT INTO availability.hosts (id, workspace_id, name, email, timezone) VALUES ($1, $2, 'Host', 'h@example.com', $3)`, [id, ws, o.timezone ?? 'Europe/Berlin']);
  if (o.schedule !== null) {
    const s = o.schedule ?? { weekly: {}, overrides: [], has: false };
    await admin.query(`INSERT INTO availability.schedules (host_id, workspace_id, weekly, overrides, has_availability) VALUES ($1, $2, $3, $4, $5)`, [id, ws, JSON.stringify(s.weekly), JSON.stringify(s.overrides), s.has]);
  }
  if (o.calendar) await admin.query(`INSERT INTO availability.calendar_connections (host_id, workspace_id, status, error_code, event_at) VALUES ($1, $2, $3, NULL, now())`, [id, ws, o.calendar]);
}

async function addEventType(id: string, ws: string, hostId: string, o: Record<string, unknown> = {}) {
  const v = { description: null, duration: 30, interval: 15, before: 0, after: 5, notice: 60, advance: 43_200, meeting: 'video', status: 'active', access: 'public', ...o };
  await admin.query(
    `INSERT INTO availability.event_types (id, workspace_id, host_id, name, description, slug, duration_minutes, slot_interval_minutes, buffer_before_minutes,
       buffer_after_minutes, minimum_notice_minutes, maximum_advance_minutes, meeting_type, status, access, created_at, updated_at)
     VALUES ($1, $2, $3, 'Intro ' || $1, $4, 'slug-' || $1, $5, $6, $7, $8, $9, $10, $11, $12, $13, '2026-01-02T03:04:05.678Z', '2026-02-03T04:05:06.789Z')`,
    [id, ws, hostId, v.description, v.duration, v.interval, v.before, v.after, v.notice, v.advance, v.meeting, v.status, v.access],
  );
}

describe('availability_slot_context (loadContext)', () => {
  const ids: Array<[string, string]> = [];

  beforeAll(async () => {
    const weekly = { mon: [{ start: '09:00', end: '12:00' }, { start: '13:00', end: '17:30' }], sat: [{ start: '00:00', end: '24:00' }] };
    const overrides = [{ date: '2026-06-10', intervals: [] }, { date: '2026-06-11', intervals: [{ start: '08:00', end: '09:15' }] }];
    await addHost('hst_p_full', WS[0]!, { schedule: { weekly, overrides, has: true }, calendar: 'connected' });
    await addHost('hst_p_empty', WS[0]!, { timezone: 'America/Santiago' });
    await addHost('hst_p_error', WS[0]!, { schedule: { weekly, overrides: [], has: true }, calendar: 'error' });
    await addHost('hst_p_gone', WS[0]!, { schedule: { weekly: {}, overrides, has: true }, calendar: 'disconnected' });
    await addHost('hst_p_noschedule', WS[0]!, { schedule: null, calendar: 'connected' });
    await addHost('hst_p_b', WS[1]!, { schedule: { weekly, overrides, has: true }, calendar: 'connected' });
    await addEventType('evt_p_1', WS[0]!, 'hst_p_full', { description: 'Thirty minutes, “quoted” and ünïcode' });
    await addEventType('evt_p_2', WS[0]!, 'hst_p_full', { status: 'inactive', access: 'invitation_only', meeting: 'phone', before: 10, after: 0 });
    await addEventType('evt_p_3', WS[0]!, 'hst_p_empty', { duration: 45, interval: 45, notice: 0, advance: 525_600 });
    await addEventType('evt_p_4', WS[0]!, 'hst_p_error');
    await addEventType('evt_p_5', WS[0]!, 'hst_p_gone');
    await addEventType('evt_p_6', WS[0]!, 'hst_p_noschedule', { meeting: 'in_person' });
    await addEventType('evt_p_b', WS[1]!, 'hst_p_b');
    // Rows that disagree on the workspace (written by hand): the joins are per workspace, so none applies.
    await addEventType('evt_p_cross', WS[0]!, 'hst_p_b');
    await admin.query(`INSERT INTO availability.calendar_connections (host_id, workspace_id, status, event_at) VALUES ('hst_p_empty', $1, 'connected', now())`, [WS[1]]);
    for (const ws of [...WS, 'wsp_prep_none']) for (const id of ['evt_p_1', 'evt_p_2', 'evt_p_3', 'evt_p_4', 'evt_p_5', 'evt_p_6', 'evt_p_b', 'evt_p_cross', 'evt_p_missing']) ids.push([ws, id]);
  });

  it('answers exactly what the drizzle query answered, for every Event Type in every workspace', async () => {
    let found = 0;
    for (const [ws, id] of ids) {
      const expected = await drizzleSlotContext(ws, id);
      const actual = await loadSlotContext(statements, ws, id);
      // Strict: the same keys (none undefined, none extra) and the same types (Dates, not strings).
      expect({ ws, id, ctx: actual }).toStrictEqual({ ws, id, ctx: expected });
      if (actual) {
        found++;
        expect(actual.eventType.createdAt).toBeInstanceOf(Date);
      }
    }
    // Seven Event Types resolve (one per workspace pair that matches), the rest are unknown.
    expect(found).toBe(7);
    expect((await loadSlotContext(statements, WS[0]!, 'evt_p_1'))?.eventType.updatedAt.toISOString()).toBe('2026-02-03T04:05:06.789Z');
  });
});

describe('availability_booked_overlapping (bookedIntervals)', () => {
  const hostsOf = ['hst_bo_1', 'hst_bo_2'];

  beforeAll(async () => {
    const random = rng(11);
    const rows: unknown[][] = [];
    let n = 0;
    for (const ws of WS) {
      for (const host of hostsOf) {
        for (let i = 0; i < 150; i++) {
          // Starts on a 5-minute grid over two days (so boundaries often touch the queries'), some zero-length.
          const from = T0 + Math.floor(random() * 576) * 5 * MIN;
          const to = from + Math.floor(random() * 13) * 5 * MIN;
          const status = random() < 0.2 ? 'cancelled' : 'confirmed';
          rows.push([`bkg_bo_${n++}`, ws, host, 'evt_bo', 1, status, new Date(from).toISOString(), new Date(to).toISOString()]);
        }
        for (let i = 0; i < 30; i++) {
          // Ranges around and beyond the read's 72-hour bound (LONGEST_BLOCKED_HOURS), starting up to ten days
          // before the queries' window: found through the bounded scan or through the index of long ranges.
          const to = T0 + Math.floor(random() * 600) * 5 * MIN;
          const from = to - (i % 3 === 0 ? 72 * 60 * MIN + (Math.floor(random() * 3) - 1) * 5 * MIN : Math.floor(random() * 2880) * 5 * MIN);
          const status = random() < 0.2 ? 'cancelled' : 'confirmed';
          rows.push([`bkg_bo_${n++}`, ws, host, 'evt_bo', 1, status, new Date(from).toISOString(), new Date(to).toISOString()]);
        }
      }
    }
    for (const r of rows) {
      await admin.query(
        `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7, $8)`,
        r,
      );
    }
  });

  it('returns the same blocked ranges as the drizzle query for 400 varied ranges, exclusions, hosts and workspaces', async () => {
    const random = rng(12);
    let nonEmpty = 0;
    let excludedOne = 0;
    let foundLong = 0;
    for (let i = 0; i < 400; i++) {
      const ws = WS[Math.floor(random() * 2)]!;
      const host = random() < 0.95 ? hostsOf[Math.floor(random() * 2)]! : 'hst_bo_unknown';
      const start = T0 - 60 * MIN + Math.floor(random() * 600) * 5 * MIN;
      const range = { start: start + (random() < 0.1 ? 1 : 0), end: start + (1 + Math.floor(random() * 48)) * 5 * MIN };
      // Sometimes exclude a Booking that overlaps the range, sometimes one that does not exist.
      const all = await drizzleBookedOverlapping(ws, host, range);
      let exclude: string | undefined;
      if (random() < 0.5 && all.length > 0) {
        const { rows } = await admin.query(`SELECT booking_id FROM availability.booked_intervals WHERE workspace_id = $1 AND host_id = $2 AND status = 'confirmed' AND blocked_to > $3 AND blocked_from < $4 LIMIT 1`, [
          ws,
          host,
          new Date(range.start),
          new Date(range.end),
        ]);
        exclude = rows[0].booking_id;
      } else if (random() < 0.3) exclude = 'bkg_bo_nothing';
      const expected = (await drizzleBookedOverlapping(ws, host, range, exclude)).sort(byStart);
      const actual = (await bookedIntervalsOverlapping(statements, ws, host, range, exclude)).sort(byStart);
      expect({ i, intervals: actual }).toEqual({ i, intervals: expected });
      if (expected.length > 0) nonEmpty++;
      if (exclude && expected.length < all.length) excludedOne++;
      if (expected.some((r) => r.start <= range.start - LONGEST_BLOCKED_HOURS * 60 * MIN)) foundLong++;
    }
    // The comparison covered real answers, not only empty ones, exclusions that removed something, and
    // ranges found only because they are longer than the bound (they start 72 hours or more before the window).
    expect(nonEmpty).toBeGreaterThan(200);
    expect(excludedOne).toBeGreaterThan(50);
    expect(foundLong).toBeGreaterThan(50);
  });

  it('finds exactly the ranges overlapping the window at its edges: touching ranges are out, long ones from well before are in, cancelled ones never', async () => {
    const ws = WS[0]!;
    const host = 'hst_bo_edge';
    const a = Date.parse('2026-07-01T09:00:00.000Z');
    const b = a + 50 * MIN;
    const H = 60 * MIN;
    const L = LONGEST_BLOCKED_HOURS * H;
    expect(L).toBe(72 * H);
    const rows: Array<[string, number, number, string?, string?, string?]> = [
      ['touches_start_at_bound', a - L, a],
      ['one_ms_past_start_from_bound', a - L, a + 1],
      ['bound_long_one_ms_later', a - L + 1, a + 1],
      ['bound_long_ending_inside', a - L + 30 * MIN, a + 30 * MIN],
      ['ten_days_ending_inside', a - 240 * H, a + 5 * MIN],
      ['ten_days_cancelled', a - 240 * H - 1, a + 5 * MIN + 1, 'cancelled'],
      ['ten_days_touching', a - 240 * H, a],
      ['month_covering', a - 720 * H, b + 720 * H],
      ['long_starting_inside', a + 10 * MIN, a + 100 * H],
      ['touches_end', b, b + 30 * MIN],
      ['one_ms_before_end', b - 1, b + H],
      ['inside', a + 10 * MIN, a + 20 * MIN],
      ['inside_cancelled', a + 10 * MIN + 1, a + 20 * MIN - 1, 'cancelled'],
      ['long_other_host', a - 240 * H, b + H, 'confirmed', 'hst_bo_edge_other'],
      ['long_other_workspace', a - 240 * H + 1, b + H, 'confirmed', host, WS[1]!],
    ];
    // Every range is distinct, so a range read back names its row.
    expect(new Set(rows.map(([, from, to]) => `${from}-${to}`)).size).toBe(rows.length);
    for (const [id, from, to, status, rowHost, rowWs] of rows) {
      await admin.query(
        `INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
         VALUES ($1, $2, $3, 'evt_bo', 1, $4, $5, $6, $5, $6)`,
        [`bkg_edge_${id}`, rowWs ?? ws, rowHost ?? host, status ?? 'confirmed', new Date(from).toISOString(), new Date(to).toISOString()],
      );
    }
    const found = async (exclude?: string) => {
      const got = await bookedIntervalsOverlapping(statements, ws, host, { start: a, end: b }, exclude);
      return rows.filter(([, from, to]) => got.some((g) => g.start === from && g.end === to)).map(([id]) => id).sort();
    };
    const expected = ['bound_long_ending_inside', 'bound_long_one_ms_later', 'inside', 'long_starting_inside', 'month_covering', 'one_ms_before_end', 'one_ms_past_start_from_bound', 'ten_days_ending_inside'];
    expect(await found()).toEqual(expected);
    expect(await bookedIntervalsOverlapping(statements, ws, host, { start: a, end: b })).toHaveLength(expected.length);
    // The oracle agrees, and an excluded long range is left out like any other.
    expect((await bookedIntervalsOverlapping(statements, ws, host, { start: a, end: b })).sort(byStart)).toEqual((await drizzleBookedOverlapping(ws, host, { start: a, end: b })).sort(byStart));
    expect(await found('bkg_edge_month_covering')).toEqual(expected.filter((id) => id !== 'month_covering'));
  });

  it('is planned once per connection: every execution reuses the generic plan', async () => {
    const plansOf = async (client: PoolClient) =>
      (await client.query(`SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1`, [BOOKED_OVERLAPPING.name])).rows[0] ?? { generic: 0, custom: 0 };
    // The pool has one connection: the statement runs on the same session as the look at it.
    const client = await statements.connect();
    try {
      const before = await plansOf(client);
      for (let i = 0; i < 20; i++) await bookedIntervalsOverlapping(client, WS[0]!, hostsOf[i % 2]!, { start: T0 + i * 60 * MIN, end: T0 + (i + 1) * 90 * MIN });
      expect(await plansOf(client)).toEqual({ generic: before.generic + 20, custom: 0 });
    } finally {
      client.release();
    }
  });
});

describe('availability_upsert_booked_interval (the projection upsert)', () => {
  const snapshot = async () =>
    (
      await admin.query(
        `SELECT booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to
         FROM availability.booked_intervals WHERE booking_id LIKE 'bkg_up_%' ORDER BY booking_id`,
      )
    ).rows;

  it('leaves the same rows as the drizzle upsert after 600 events in any order: newer versions win, older and foreign ones change nothing', async () => {
    const random = rng(13);
    const events: BookedInterval[] = [];
    for (let i = 0; i < 600; i++) {
      const id = `bkg_up_${Math.floor(random() * 80)}`;
      const start = T0 + Math.floor(random() * 200) * 15 * MIN;
      const end = start + (1 + Math.floor(random() * 8)) * 15 * MIN;
      const buffer = Math.floor(random() * 3) * 5 * MIN;
      events.push({
        bookingId: id,
        // The same Booking id from another workspace must never touch the row.
        workspaceId: random() < 0.1 ? WS[1]! : WS[0]!,
        hostId: `hst_up_${Math.floor(random() * 3)}`,
        eventTypeId: `evt_up_${Math.floor(random() * 3)}`,
        version: 1 + Math.floor(random() * 5),
        status: random() < 0.3 ? 'cancelled' : 'confirmed',
        startAt: new Date(start),
        endAt: new Date(end),
        blockedFrom: new Date(start - buffer),
        blockedTo: new Date(end + buffer),
      });
    }
    for (const e of events) await drizzleUpsert(e);
    const expected = await snapshot();
    await admin.query(`DELETE FROM availability.booked_intervals WHERE booking_id LIKE 'bkg_up_%'`);
    for (const e of events) await upsertBookedInterval(statements, e);
    const actual = await snapshot();
    expect(actual).toEqual(expected);
    expect(actual.length).toBe(80);
    expect(new Set(actual.map((r) => r.version)).size).toBeGreaterThan(2);
  });

  it('sets updated_at when it applies a newer version and leaves it when it changes nothing', async () => {
    const row: BookedInterval = {
      bookingId: 'bkg_up_stamp',
      workspaceId: WS[0]!,
      hostId: 'hst_up_0',
      eventTypeId: 'evt_up_0',
      version: 2,
      status: 'confirmed',
      startAt: new Date(T0),
      endAt: new Date(T0 + 30 * MIN),
      blockedFrom: new Date(T0),
      blockedTo: new Date(T0 + 30 * MIN),
    };
    await upsertBookedInterval(statements, row);
    const stamp = async () => (await admin.query(`SELECT updated_at FROM availability.booked_intervals WHERE booking_id = 'bkg_up_stamp'`)).rows[0].updated_at as Date;
    await admin.query(`UPDATE availability.booked_intervals SET updated_at = '2020-01-01T00:00:00Z' WHERE booking_id = 'bkg_up_stamp'`);
    await upsertBookedInterval(statements, { ...row, version: 1, status: 'cancelled' });
    expect((await stamp()).toISOString()).toBe('2020-01-01T00:00:00.000Z');
    await upsertBookedInterval(statements, { ...row, version: 3, status: 'cancelled' });
    expect((await stamp()).getTime()).toBeGreaterThan(Date.parse('2025-01-01T00:00:00Z'));
  });
});

describe('availability_upsert_booked_intervals (the batched projection upsert)', () => {
  const snapshot = async () =>
    (
      await admin.query(
        `SELECT booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to, updated_at > now() - interval '1 hour' AS touched
         FROM availability.booked_intervals WHERE booking_id LIKE 'bkg_ub_%' ORDER BY booking_id`,
      )
    ).rows;
  const reset = async () => {
    await admin.query(`DELETE FROM availability.booked_intervals WHERE booking_id LIKE 'bkg_ub_%'`);
    // Rows of another workspace under ids the events below use: never touched by either form.
    await admin.query(`
      INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to, updated_at)
      SELECT 'bkg_ub_' || i, '${WS[1]}', 'hst_ub_x', 'evt_ub_x', 1, 'confirmed', '2026-06-01', '2026-06-01 00:30', '2026-06-01', '2026-06-01 00:30', '2020-01-01'
      FROM generate_series(70, 79) i`);
  };
  const randomEvents = (seed: number, count: number): BookedInterval[] => {
    const random = rng(seed);
    return Array.from({ length: count }, () => {
      const start = T0 + Math.floor(random() * 200) * 15 * MIN;
      const end = start + (1 + Math.floor(random() * 8)) * 15 * MIN;
      const buffer = Math.floor(random() * 3) * 5 * MIN;
      return {
        bookingId: `bkg_ub_${Math.floor(random() * 80)}`,
        workspaceId: WS[0]!,
        hostId: `hst_ub_${Math.floor(random() * 3)}`,
        eventTypeId: `evt_ub_${Math.floor(random() * 3)}`,
        version: 1 + Math.floor(random() * 5),
        status: random() < 0.3 ? 'cancelled' : 'confirmed',
        startAt: new Date(start),
        endAt: new Date(end),
        blockedFrom: new Date(start - buffer),
        blockedTo: new Date(end + buffer),
      } satisfies BookedInterval;
    });
  };

  it('leaves the rows the single upsert leaves one by one: batches of 1–30 events of the same and different Bookings, versions out of order', async () => {
    for (const seed of [21, 22, 23]) {
      const events = randomEvents(seed, 600);
      await reset();
      for (const e of events) await upsertBookedInterval(statements, e);
      const expected = await snapshot();
      await reset();
      const random = rng(seed + 100);
      const sizes: number[] = [];
      for (let i = 0; i < events.length; ) {
        const size = 1 + Math.floor(random() * 30);
        sizes.push(size);
        await upsertBookedIntervals(statements, events.slice(i, i + size));
        i += size;
      }
      expect(await snapshot()).toEqual(expected);
      expect(expected.length).toBe(80);
      expect(expected.filter((r) => r.workspace_id === WS[1]).map((r) => r.touched)).toEqual(Array(10).fill(false));
      expect(Math.max(...sizes)).toBeGreaterThan(20);
    }
  });

  it('one statement per batch, one row per Booking: its highest version, the first of equal ones', async () => {
    await reset();
    const [a, b] = randomEvents(31, 2).map((e, i) => ({ ...e, bookingId: `bkg_ub_batch_${i}` }));
    const batch: BookedInterval[] = [
      { ...a!, version: 2, status: 'confirmed' },
      { ...b!, version: 1 },
      { ...a!, version: 3, status: 'cancelled' },
      { ...a!, version: 1, status: 'confirmed' },
      { ...b!, version: 1, hostId: 'hst_ub_other' },
    ];
    expect(latestPerBooking(batch)).toEqual([batch[2], batch[1]]);
    const sent: string[] = [];
    const counting: StatementPool = {
      query: ((config: { name: string }, values?: unknown[]) => {
        sent.push(config.name);
        return statements.query(config as never, values as never);
      }) as StatementPool['query'],
    };
    await upsertBookedIntervals(counting, batch);
    expect(sent).toEqual([UPSERT_BOOKED_INTERVALS.name]);
    const rows = await admin.query(`SELECT booking_id, version, status, host_id FROM availability.booked_intervals WHERE booking_id LIKE 'bkg_ub_batch_%' ORDER BY booking_id`);
    expect(rows.rows).toEqual([
      { booking_id: 'bkg_ub_batch_0', version: 3, status: 'cancelled', host_id: a!.hostId },
      { booking_id: 'bkg_ub_batch_1', version: 1, status: b!.status, host_id: b!.hostId },
    ]);
  });

  it('refuses a batch holding one Booking id under two workspaces, and writes nothing of it', async () => {
    await reset();
    const [e] = randomEvents(41, 1);
    const other = { ...e!, bookingId: 'bkg_ub_lone' };
    expect(() => latestPerBooking([e!, { ...e!, workspaceId: WS[1]!, version: 9 }])).toThrow(/two workspaces/);
    await expect(upsertBookedIntervals(statements, [other, e!, { ...e!, workspaceId: WS[1]!, version: 9 }])).rejects.toThrow(/two workspaces/);
    expect((await admin.query(`SELECT 1 FROM availability.booked_intervals WHERE booking_id = 'bkg_ub_lone'`)).rows).toHaveLength(0);
  });
});

describe('generic plans on a realistic table', () => {
  beforeAll(async () => {
    // 400 hosts with a schedule, a calendar connection and an Event Type each; one host with 6,000 Bookings (3,000 in the past), 200 others with 400 (200 in the past).
    await admin.query(`
      INSERT INTO availability.hosts (id, workspace_id, name, email, timezone)
      SELECT 'hst_gp_' || i, 'wsp_gp', 'Host', 'h@example.com', 'Europe/Berlin' FROM generate_series(0, 399) i`);
    await admin.query(`
      INSERT INTO availability.schedules (host_id, workspace_id, weekly, overrides, has_availability)
      SELECT 'hst_gp_' || i, 'wsp_gp', '{}', '[]', false FROM generate_series(0, 399) i`);
    await admin.query(`
      INSERT INTO availability.calendar_connections (host_id, workspace_id, status, event_at)
      SELECT 'hst_gp_' || i, 'wsp_gp', 'connected', now() FROM generate_series(0, 399) i`);
    await admin.query(`
      INSERT INTO availability.event_types (id, workspace_id, host_id, name, slug, duration_minutes, slot_interval_minutes, buffer_before_minutes,
        buffer_after_minutes, minimum_notice_minutes, maximum_advance_minutes, meeting_type, status, access)
      SELECT 'evt_gp_' || i, 'wsp_gp', 'hst_gp_' || i, 'Intro', 'intro-' || i, 30, 30, 0, 0, 0, 1000, 'video', 'active', 'public' FROM generate_series(0, 399) i`);
    await admin.query(`
      INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
      SELECT 'bkg_gp_' || h || '_' || i, 'wsp_gp', 'hst_gp_' || h, 'evt_gp_' || h, 1, CASE WHEN i % 10 = 0 THEN 'cancelled' ELSE 'confirmed' END,
             t, t + interval '30 minutes', t - interval '10 minutes', t + interval '40 minutes'
      FROM generate_series(0, 200) h, generate_series(CASE WHEN h = 0 THEN -3000 ELSE -200 END, CASE WHEN h = 0 THEN 2999 ELSE 199 END) i,
           LATERAL (SELECT timestamptz '2026-06-01' + i * interval '57 minutes' AS t) x`);
    await admin.query('ANALYZE availability.hosts, availability.schedules, availability.event_types, availability.booked_intervals, availability.calendar_connections');
  });

  const genericPlan = (statement: NamedStatement, values: unknown[]) => genericPlanOn(statements, statement, values);
  const pagesPerRead = (statement: NamedStatement, ws: string, host: string, starts: number[], length: number) => pagesPerReadOn(statements, statement, ws, host, starts, length);

  it('booked intervals: a range scan of booked_intervals_host_from_idx from 72 hours before the window, and the index of long ranges (never a sequential scan)', async () => {
    expectBookedOverlappingPlan(await genericPlan(BOOKED_OVERLAPPING, ['wsp_gp', 'hst_gp_0', '2026-06-10T09:00:00Z', '2026-06-10T10:00:00Z', '']));
  });

  it('booked intervals: reading a slot check of the host with 3,000 future Bookings touches as few pages as for a host with 200', async () => {
    // hst_gp_0 has a Booking every 57 minutes until the end of August, hst_gp_1 until 2026-06-08.
    const windows = Array.from({ length: 24 }, (_, i) => Date.parse('2026-06-01T09:00:00Z') + i * 3.7 * 86_400_000);
    const busy = await pagesPerRead(BOOKED_OVERLAPPING, 'wsp_gp', 'hst_gp_0', windows, 50 * MIN);
    const sparse = await pagesPerRead(BOOKED_OVERLAPPING, 'wsp_gp', 'hst_gp_1', windows, 50 * MIN);
    expect(busy.found).toBeGreaterThan(20);
    // Root-to-leaf in each index, a leaf or two of the last 72 hours, the heap pages of the rows found.
    expect(Math.max(...busy.pages)).toBeLessThanOrEqual(12);
    expect(Math.max(...busy.pages)).toBeLessThanOrEqual(Math.max(...sparse.pages) + 4);
  });

  it('slot context: primary-key lookups only', async () => {
    const plan = await genericPlan(SLOT_CONTEXT, ['wsp_gp', 'evt_gp_7']);
    for (const index of ['event_types_pkey', 'hosts_pkey', 'schedules_pkey', 'calendar_connections_pkey']) expect(plan).toContain(index);
    expect(plan).not.toContain('Seq Scan');
  });

  it('batched upsert: an insert from the arrays with its conflict on the primary key', async () => {
    const plan = await genericPlan(UPSERT_BOOKED_INTERVALS, [
      '{bkg_gp_x,bkg_gp_y}', '{wsp_gp,wsp_gp}', '{hst_gp_1,hst_gp_2}', '{evt_gp_1,evt_gp_2}', '{1,2}', '{confirmed,cancelled}',
      '{2026-06-01T00:00:00Z,2026-06-01T01:00:00Z}', '{2026-06-01T00:30:00Z,2026-06-01T01:30:00Z}', '{2026-06-01T00:00:00Z,2026-06-01T01:00:00Z}', '{2026-06-01T00:30:00Z,2026-06-01T01:30:00Z}',
    ]);
    expect(plan).toContain('Conflict Arbiter Indexes: booked_intervals_pkey');
    expect(plan).toContain('Function Scan on unnest');
    expect(plan).not.toContain('Seq Scan');
  });

  it('upsert: an insert with its conflict on the primary key', async () => {
    const plan = await genericPlan(UPSERT_BOOKED_INTERVAL, ['bkg_gp_x', 'wsp_gp', 'hst_gp_1', 'evt_gp_1', 1, 'confirmed', '2026-06-01T00:00:00Z', '2026-06-01T00:30:00Z', '2026-06-01T00:00:00Z', '2026-06-01T00:30:00Z']);
    expect(plan).toContain('Conflict Arbiter Indexes: booked_intervals_pkey');
    expect(plan).not.toContain('Seq Scan');
  });
});

describe('the booked-interval read on a table of one host with 3,000 future Bookings (a database of its own)', () => {
  let one: TestDatabase;
  let onePool: Pool;

  beforeAll(async () => {
    one = await createTestDatabase({ services: ['availability'] });
    onePool = createPool(one.urlFor('availability'), { max: 1, genericPlans: true, applicationName: 'test-statements-one', logger: { error: () => undefined } });
    await one.adminPool.query(`
      INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
      SELECT 'bkg_one_' || i, 'wsp_one', 'hst_one', 'evt_one', 1, CASE WHEN i % 10 = 0 THEN 'cancelled' ELSE 'confirmed' END,
             t, t + interval '30 minutes', t - interval '10 minutes', t + interval '40 minutes'
      FROM generate_series(-3000, 2999) i, LATERAL (SELECT timestamptz '2026-06-01' + i * interval '57 minutes' AS t) x`);
    await one.adminPool.query('ANALYZE availability.booked_intervals');
  });

  afterAll(async () => {
    await onePool?.end();
    await one?.drop();
  });

  it('has the same generic plan, and a slot check reads a handful of pages wherever its window is', async () => {
    expectBookedOverlappingPlan(await genericPlanOn(onePool, BOOKED_OVERLAPPING, ['wsp_one', 'hst_one', '2026-06-10T09:00:00Z', '2026-06-10T10:00:00Z', '']));
    const windows = Array.from({ length: 24 }, (_, i) => Date.parse('2026-06-01T09:00:00Z') + i * 3.7 * 86_400_000);
    const { pages, found } = await pagesPerReadOn(onePool, BOOKED_OVERLAPPING, 'wsp_one', 'hst_one', windows, 50 * MIN);
    expect(found).toBeGreaterThan(20);
    expect(Math.max(...pages)).toBeLessThanOrEqual(12);
  });
});

describe('migration 0004 (booked_intervals_range_scan)', () => {
  const indexesOf = async (pool: Pool) =>
    (await pool.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'availability' AND tablename = 'booked_intervals' ORDER BY indexname`)).rows.map((r) => r.indexdef);
  const expectedIndexes = [
    'CREATE INDEX booked_intervals_host_from_idx ON availability.booked_intervals USING btree (workspace_id, host_id, blocked_from, blocked_to) WHERE (status = \'confirmed\'::text)',
    "CREATE INDEX booked_intervals_host_long_idx ON availability.booked_intervals USING btree (workspace_id, host_id, blocked_to) WHERE ((status = 'confirmed'::text) AND ((blocked_to - blocked_from) > '72:00:00'::interval))",
    'CREATE UNIQUE INDEX booked_intervals_pkey ON availability.booked_intervals USING btree (booking_id)',
  ];

  it('leaves exactly the read’s two indexes and the primary key on a fresh schema', async () => {
    expect(await indexesOf(admin)).toEqual(expectedIndexes);
  });

  it('applies over a schema at 0003 that holds Bookings, and the read answers as before it', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'availability-0003-'));
    const source = path.resolve(__dirname, '../migrations');
    cpSync(source, folder, { recursive: true });
    const journal = JSON.parse(readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> };
    const upTo = journal.entries.findIndex((e) => e.tag === '0004_booked_intervals_range_scan');
    expect(upTo).toBe(4);
    writeFileSync(path.join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, upTo) }));
    const old = await createTestDatabase({ services: ['availability'], migrationsFolders: { availability: folder } });
    try {
      expect(await indexesOf(old.adminPool)).toContain("CREATE INDEX booked_intervals_host_idx ON availability.booked_intervals USING btree (workspace_id, host_id, blocked_to) WHERE (status = 'confirmed'::text)");
      await old.adminPool.query(`
        INSERT INTO availability.booked_intervals (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)
        SELECT 'bkg_mig_' || i, 'wsp_mig', 'hst_mig', 'evt_mig', 1, CASE WHEN i % 7 = 0 THEN 'cancelled' ELSE 'confirmed' END,
               t, t + interval '30 minutes', t - interval '10 minutes', t + (i % 5) * interval '40 hours'
        FROM generate_series(0, 299) i, LATERAL (SELECT timestamptz '2026-06-01' + i * interval '97 minutes' AS t) x`);
      const range = { start: Date.parse('2026-06-10T00:00:00Z'), end: Date.parse('2026-06-11T00:00:00Z') };
      const read = async () => {
        const pool = createPool(old.urlFor('availability'), { max: 1, genericPlans: true, applicationName: 'test-migration', logger: { error: () => undefined } });
        try {
          return (await bookedIntervalsOverlapping(pool, 'wsp_mig', 'hst_mig', range)).sort(byStart);
        } finally {
          await pool.end();
        }
      };
      const before = await read();
      // Ranges up to 160 hours long: some are found only through the index of long ranges after the migration.
      expect(before.some((r) => r.start <= range.start - LONGEST_BLOCKED_HOURS * 60 * MIN)).toBe(true);
      const result = await migrateService({ adminUrl: old.adminUrl, service: 'availability', migrationsFolder: source });
      expect(result.applied).toBe(1);
      expect(await indexesOf(old.adminPool)).toEqual(expectedIndexes);
      expect(await read()).toEqual(before);
    } finally {
      await old.drop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
