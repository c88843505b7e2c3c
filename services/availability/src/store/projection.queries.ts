import { and, eq, gt, lt, ne, sql } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import { preparedPerDb } from './prepared';
import type { BookedInterval } from '../domain/booked-interval';
import type { CalendarConnectionStatus } from '../domain/event-type';
import type { Interval } from '../domain/slot-engine';
import { bookedIntervals, calendarConnections } from './schema';

/**
 * Keeps the highest version of each Booking: a redelivered or late, older event changes nothing.
 * Versions only grow (create 1, each reschedule or cancel +1), so an equal version is the same state.
 */
export async function upsertBookedInterval(tx: Db | DbTx, row: BookedInterval): Promise<void> {
  await tx
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

const epochMs = (column: typeof bookedIntervals.blockedFrom) => sql`floor(extract(epoch from ${column}) * 1000)::bigint`;

/**
 * A Slots query reads every Booking of a month: the rows come back as one JSON array of epoch-ms pairs
 * (Postgres builds it, JSON.parse reads it) rather than as 1,000 rows of two parsed timestamps, and the
 * statement is prepared once per connection.
 */
const overlapping = preparedPerDb((db) =>
  db
    .select({ intervals: sql<Array<[number, number]>>`coalesce(json_agg(json_build_array(${epochMs(bookedIntervals.blockedFrom)}, ${epochMs(bookedIntervals.blockedTo)})), '[]'::json)` })
    .from(bookedIntervals)
    .where(
      and(
        eq(bookedIntervals.workspaceId, sql.placeholder('workspaceId')),
        eq(bookedIntervals.hostId, sql.placeholder('hostId')),
        eq(bookedIntervals.status, 'confirmed'),
        gt(bookedIntervals.blockedTo, sql.placeholder('from')),
        lt(bookedIntervals.blockedFrom, sql.placeholder('to')),
        // Booking ids are never empty, so '' excludes nothing.
        ne(bookedIntervals.bookingId, sql.placeholder('exclude')),
      ),
    )
    .prepare('availability_booked_overlapping'),
);

/** Blocked ranges of the host's confirmed Bookings overlapping `range`, as epoch ms. */
export async function bookedIntervalsOverlapping(db: Db, workspaceId: string, hostId: string, range: Interval, excludeBookingId?: string): Promise<Interval[]> {
  const [row] = await overlapping(db).execute({
    workspaceId,
    hostId,
    from: new Date(range.start).toISOString(),
    to: new Date(range.end).toISOString(),
    exclude: excludeBookingId ?? '',
  });
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
