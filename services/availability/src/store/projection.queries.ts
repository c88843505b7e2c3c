import { sql } from 'drizzle-orm';
import type { DbTx } from '@sched/db';
import { runNamed, type NamedStatement, type StatementPool } from './prepared';
import type { BookedInterval } from '../domain/booked-interval';
import type { CalendarConnectionStatus } from '../domain/event-type';
import type { Interval } from '../domain/slot-engine';
import { calendarConnections, LONGEST_BLOCKED_HOURS } from './schema';

/**
 * Keeps the highest version of each Booking: a redelivered or late, older event changes nothing.
 * Versions only grow (create 1, each reschedule or cancel +1), so an equal version is the same state.
 * A row of another workspace under the same Booking id is never touched.
 */
const INSERT_BOOKED_INTERVALS = `
    INSERT INTO availability.booked_intervals AS b
      (booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to)`;
/** The rule both upserts apply (one text, so the single and the batched form cannot drift apart). */
const KEEP_HIGHEST_VERSION = `
    ON CONFLICT (booking_id) DO UPDATE SET
      version = excluded.version, status = excluded.status, host_id = excluded.host_id, event_type_id = excluded.event_type_id,
      start_at = excluded.start_at, end_at = excluded.end_at, blocked_from = excluded.blocked_from, blocked_to = excluded.blocked_to,
      updated_at = now()
    WHERE b.version < excluded.version AND b.workspace_id = excluded.workspace_id`;

export const UPSERT_BOOKED_INTERVAL = {
  name: 'availability_upsert_booked_interval',
  text: `${INSERT_BOOKED_INTERVALS}
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)${KEEP_HIGHEST_VERSION}`,
} as const satisfies NamedStatement;

/** One booking.* event's row, in one autocommit statement (a named statement on the statement pool). */
export async function upsertBookedInterval(pool: StatementPool, row: BookedInterval): Promise<void> {
  await runNamed(pool, UPSERT_BOOKED_INTERVAL, [
    row.bookingId,
    row.workspaceId,
    row.hostId,
    row.eventTypeId,
    row.version,
    row.status,
    row.startAt.toISOString(),
    row.endAt.toISOString(),
    row.blockedFrom.toISOString(),
    row.blockedTo.toISOString(),
  ]);
}

/**
 * Several booking.* events' rows in one autocommit statement (libs/messaging `idempotent.batchHandler`):
 * the same upsert over the rows of parallel arrays (`unnest`), so one named statement, planned once per
 * connection, serves a batch of any size. The rows must name distinct Bookings: ON CONFLICT DO UPDATE cannot
 * touch one row twice in a statement (`latestPerBooking`).
 */
export const UPSERT_BOOKED_INTERVALS = {
  name: 'availability_upsert_booked_intervals',
  text: `${INSERT_BOOKED_INTERVALS}
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[],
                         $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[])${KEEP_HIGHEST_VERSION}`,
} as const satisfies NamedStatement;

/**
 * One row per Booking, the one the single upsert would leave applying `rows` one by one: the highest
 * version (of equal ones, the first: an equal version is the same state). A Booking id under two
 * workspaces throws: which one's row stands depends on which came first, so such a batch is left to the
 * one-by-one path (the consumer runs its messages alone when the batch handler throws).
 */
export function latestPerBooking(rows: readonly BookedInterval[]): BookedInterval[] {
  const latest = new Map<string, BookedInterval>();
  for (const row of rows) {
    const held = latest.get(row.bookingId);
    if (!held) latest.set(row.bookingId, row);
    else if (held.workspaceId !== row.workspaceId) throw new Error(`Booking ${row.bookingId} appears under two workspaces in one batch`);
    else if (row.version > held.version) latest.set(row.bookingId, row);
  }
  return [...latest.values()];
}

/** Several booking.* events' rows in one autocommit statement: what `upsertBookedInterval` of each leaves. */
export async function upsertBookedIntervals(pool: StatementPool, rows: readonly BookedInterval[]): Promise<void> {
  const latest = latestPerBooking(rows);
  if (latest.length === 1) return upsertBookedInterval(pool, latest[0]!);
  const iso = (d: Date) => d.toISOString();
  await runNamed(pool, UPSERT_BOOKED_INTERVALS, [
    latest.map((r) => r.bookingId),
    latest.map((r) => r.workspaceId),
    latest.map((r) => r.hostId),
    latest.map((r) => r.eventTypeId),
    latest.map((r) => r.version),
    latest.map((r) => r.status),
    latest.map((r) => iso(r.startAt)),
    latest.map((r) => iso(r.endAt)),
    latest.map((r) => iso(r.blockedFrom)),
    latest.map((r) => iso(r.blockedTo)),
  ]);
}

/**
 * Blocked ranges of a host's confirmed Bookings overlapping [$3, $4), but Booking $5's ('' excludes
 * nothing: Booking ids are never empty). A Slots query reads every Booking of a month, so the rows come
 * back as one JSON array of epoch-ms pairs (Postgres builds it, JSON.parse reads it) rather than as
 * 1,000 rows of two parsed timestamps.
 *
 * A range overlaps [$3, $4) when `blocked_to > $3 AND blocked_from < $4`. Read as that, the only index
 * bound is one of the two, so the scan walked every future Booking of the host (the btree led with
 * blocked_to). Instead the rows are split by where they start, with L = LONGEST_BLOCKED_HOURS (72):
 * - `blocked_from > $3 − L`: a range scan of booked_intervals_host_from_idx over blocked_from in
 *   ($3 − L, $4), which tests `blocked_to > $3` on the index entries (blocked_to is a key column);
 *   it reads at most L hours of the host's Bookings before the window, whatever their number.
 * - `blocked_from <= $3 − L`: such a range reaches past $3 only if it is longer than L, so only the
 *   partial index booked_intervals_host_long_idx (ranges longer than L; none within the contract's
 *   limits) is read. Its predicate is written here exactly as in the index, so the plan can use it.
 * The two arms are disjoint and together are exactly the overlap condition, whatever the lengths.
 *
 * `status = 'confirmed'` is written in the text, not passed as a value: it is the predicate of both
 * partial indexes, and only a literal lets the generic plan use them (with the status as a parameter
 * the generic plan was a sequential scan, so Postgres re-planned the statement at every execution).
 */
const LONG = `interval '${LONGEST_BLOCKED_HOURS} hours'`;
export const BOOKED_OVERLAPPING = {
  name: 'availability_booked_overlapping',
  text: `
    SELECT coalesce(json_agg(json_build_array(
             floor(extract(epoch FROM blocked_from) * 1000)::bigint,
             floor(extract(epoch FROM blocked_to) * 1000)::bigint)), '[]'::json) AS intervals
    FROM (
      SELECT blocked_from, blocked_to FROM availability.booked_intervals
      WHERE workspace_id = $1 AND host_id = $2 AND status = 'confirmed'
        AND blocked_from > $3::timestamptz - ${LONG} AND blocked_from < $4 AND blocked_to > $3 AND booking_id <> $5
      UNION ALL
      SELECT blocked_from, blocked_to FROM availability.booked_intervals
      WHERE workspace_id = $1 AND host_id = $2 AND status = 'confirmed' AND blocked_to - blocked_from > ${LONG}
        AND blocked_from <= $3::timestamptz - ${LONG} AND blocked_from < $4 AND blocked_to > $3 AND booking_id <> $5
    ) overlapping`,
} as const satisfies NamedStatement;

/** Blocked ranges of the host's confirmed Bookings overlapping `range`, as epoch ms. */
export async function bookedIntervalsOverlapping(pool: StatementPool, workspaceId: string, hostId: string, range: Interval, excludeBookingId?: string): Promise<Interval[]> {
  const [row] = await runNamed<{ intervals: Array<[number, number]> }>(pool, BOOKED_OVERLAPPING, [
    workspaceId,
    hostId,
    new Date(range.start).toISOString(),
    new Date(range.end).toISOString(),
    excludeBookingId ?? '',
  ]);
  return (row?.intervals ?? []).map(([start, end]) => ({ start, end }));
}

/** Applies a calendar.connection_updated unless a later one was applied already. */
export async function upsertCalendarConnection(
  tx: DbTx,
  row: { workspaceId: string; hostId: string; status: CalendarConnectionStatus; errorCode: string | null; eventAt: Date },
): Promise<void> {
  await tx
    .insert(calendarConnections)
    .values(row)
    .onConflictDoUpdate({
      target: calendarConnections.hostId,
      set: { status: sql`excluded.status`, errorCode: sql`excluded.error_code`, eventAt: sql`excluded.event_at`, updatedAt: sql`now()` },
      setWhere: sql`${calendarConnections.eventAt} <= excluded.event_at AND ${calendarConnections.workspaceId} = excluded.workspace_id`,
    });
}
