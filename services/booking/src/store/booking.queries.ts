import { and, asc, eq, gt, gte, lt, or, type SQL } from 'drizzle-orm';
import { types } from 'pg';
import type { Db, DbTx } from '@sched/db';
import { DomainError, type BookingStatus } from '@sched/contracts';
import type { BookingRecord } from '../domain/booking';
import type { BookingChanges } from '../domain/ports';
import { bookings } from './schema';

type Row = typeof bookings.$inferSelect;
type Conn = Db | DbTx;

/** SQLSTATEs of a lost race for a host's time on UPDATE: exclusion violation, or the deadlock two can cause. */
const OVERLAP_CODES = new Set(['23P01', '40P01']);

function sqlState(err: unknown): string | undefined {
  // drizzle wraps driver errors (DrizzleQueryError) and keeps the pg error as `cause`.
  for (let e: unknown = err, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * Two concurrent updates onto overlapping ranges may each find the other's uncommitted row and wait on each
 * other; Postgres then aborts one with a deadlock error (documented for exclusion constraints). Either way
 * the time went to someone else.
 */
function overlapToConflict(err: unknown): never {
  if (OVERLAP_CODES.has(sqlState(err) ?? '')) throw new DomainError('slot_unavailable');
  throw err;
}

/** pg's own timestamptz parser (what a plain pg query gives), for the text drizzle's raw execute leaves. */
const parseTimestamptz = types.getTypeParser(types.builtins.TIMESTAMPTZ) as (text: string) => Date;
const instant = (v: string | Date): Date => (v instanceof Date ? v : parseTimestamptz(v));
const instantOrNull = (v: string | Date | null): Date | null => (v === null ? null : instant(v));

type Timestamps = 'startAt' | 'endAt' | 'blockedFrom' | 'blockedTo' | 'calendarWrittenAt' | 'createdAt' | 'rescheduledAt' | 'cancelledAt';

/**
 * A Booking row by its drizzle property names: drizzle's select gives timestamptz as Dates; a raw statement
 * through drizzle's execute selects the same columns aliased to these names (`workspace_id AS "workspaceId"`,
 * see calendar-result.queries.ts) and gives timestamptz as text, parsed here.
 */
export type BookingRow = Omit<Row, Timestamps> & { [K in Timestamps]: Row[K] | string };

/** The store's one mapping from a Booking row to the domain's BookingRecord. */
export function toBookingRecord(r: BookingRow): BookingRecord {
  return {
    id: r.id,
    workspaceId: r.workspaceId,
    status: r.status as BookingRecord['status'],
    version: r.version,
    source: r.source as BookingRecord['source'],
    invitationId: r.invitationId,
    eventTypeId: r.eventTypeId,
    hostId: r.hostId,
    startAt: instant(r.startAt),
    endAt: instant(r.endAt),
    blockedFrom: instant(r.blockedFrom),
    blockedTo: instant(r.blockedTo),
    guest: { name: r.guestName, email: r.guestEmail, timezone: r.guestTimezone },
    meetingType: r.meetingType as BookingRecord['meetingType'],
    joinUrl: r.joinUrl,
    calendarStatus: r.calendarStatus as BookingRecord['calendarStatus'],
    calendarErrorCode: r.calendarErrorCode as BookingRecord['calendarErrorCode'],
    calendarWrittenAt: instantOrNull(r.calendarWrittenAt),
    metadata: r.metadata,
    createdAt: instant(r.createdAt),
    rescheduledAt: instantOrNull(r.rescheduledAt),
    cancelledAt: instantOrNull(r.cancelledAt),
  };
}

export async function findBooking(db: Conn, workspaceId: string, id: string): Promise<BookingRecord | null> {
  const [row] = await db
    .select()
    .from(bookings)
    .where(and(eq(bookings.workspaceId, workspaceId), eq(bookings.id, id)));
  return row ? toBookingRecord(row) : null;
}

/** Row lock until the transaction ends: a concurrent reschedule/cancel/calendar result waits, then re-reads. */
export async function findBookingForUpdate(tx: Conn, workspaceId: string, id: string): Promise<BookingRecord | null> {
  const [row] = await tx
    .select()
    .from(bookings)
    .where(and(eq(bookings.workspaceId, workspaceId), eq(bookings.id, id)))
    .for('update');
  return row ? toBookingRecord(row) : null;
}

/** One statement: the old range of the row is replaced, so it never conflicts with its own new range. */
export async function updateBooking(tx: Conn, workspaceId: string, id: string, changes: BookingChanges): Promise<BookingRecord> {
  const rows = await tx
    .update(bookings)
    .set(changes)
    .where(and(eq(bookings.workspaceId, workspaceId), eq(bookings.id, id)))
    .returning()
    .catch(overlapToConflict);
  if (!rows[0]) throw new DomainError('not_found');
  return toBookingRecord(rows[0]);
}

export interface ListBookingsParams {
  workspaceId: string;
  status?: BookingStatus;
  startsFrom?: Date;
  startsTo?: Date;
  eventTypeId?: string;
  /** Keyset position: the last row of the previous page. */
  after?: { startAt: Date; id: string };
  /** Rows to fetch (page size + 1, to know whether another page exists). */
  limit: number;
}

/** Ascending by start_at then id (decisions.md §5), keyset, never OFFSET. */
export async function listBookings(db: Conn, p: ListBookingsParams): Promise<BookingRecord[]> {
  const where: SQL[] = [eq(bookings.workspaceId, p.workspaceId)];
  if (p.status) where.push(eq(bookings.status, p.status));
  if (p.eventTypeId !== undefined) where.push(eq(bookings.eventTypeId, p.eventTypeId));
  if (p.startsFrom) where.push(gte(bookings.startAt, p.startsFrom));
  if (p.startsTo) where.push(lt(bookings.startAt, p.startsTo));
  if (p.after) {
    where.push(or(gt(bookings.startAt, p.after.startAt), and(eq(bookings.startAt, p.after.startAt), gt(bookings.id, p.after.id)))!);
  }
  const rows = await db
    .select()
    .from(bookings)
    .where(and(...where))
    .orderBy(asc(bookings.startAt), asc(bookings.id))
    .limit(p.limit);
  return rows.map(toBookingRecord);
}
