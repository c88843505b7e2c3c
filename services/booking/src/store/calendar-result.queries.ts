import { sql } from 'drizzle-orm';
import { types } from 'pg';
import { DomainError } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import { enqueueEventSql } from '@sched/messaging';
import type { BookingRecord } from '../domain/booking';
import type { CalendarResultUnitOfWork } from '../domain/ports';
import { announcementEnvelope } from '../events/booking-events';
import { outbox } from './schema';

/**
 * The calendar result's statements (domain CalendarResultUnitOfWork), on the consumer's transaction: the
 * locking read and one statement for the write and its event, both written as SQL text rather than built by
 * drizzle's query builder per message (building a select or an update cost more Node CPU than the round trip
 * itself; docs/booking.md, "Calendar results").
 */
export function calendarResultUnitOfWork(tx: DbTx): CalendarResultUnitOfWork {
  return {
    findForUpdate: (workspaceId, id) => findForUpdate(tx, workspaceId, id),
    writeCalendar: (after, announcement) => writeCalendar(tx, after, announcement ? announcementEnvelope(announcement) : undefined),
  };
}

/** A Booking row as Postgres sends it through drizzle's raw execute: timestamptz as text, json parsed. */
interface RawBookingRow {
  id: string;
  workspace_id: string;
  status: string;
  version: number;
  source: string;
  invitation_id: string | null;
  event_type_id: string;
  host_id: string;
  start_at: string | Date;
  end_at: string | Date;
  blocked_from: string | Date;
  blocked_to: string | Date;
  guest_name: string;
  guest_email: string;
  guest_timezone: string;
  meeting_type: string;
  join_url: string | null;
  calendar_status: string;
  calendar_error_code: string | null;
  calendar_written_at: string | Date | null;
  metadata: Record<string, unknown>;
  created_at: string | Date;
  rescheduled_at: string | Date | null;
  cancelled_at: string | Date | null;
}

/** pg's own timestamptz parser (what a plain pg query gives), for the text drizzle's raw execute leaves. */
const parseTimestamptz = types.getTypeParser(types.builtins.TIMESTAMPTZ) as (text: string) => Date;
const instant = (v: string | Date): Date => (v instanceof Date ? v : parseTimestamptz(v));
const instantOrNull = (v: string | Date | null): Date | null => (v === null ? null : instant(v));

function toRecord(r: RawBookingRow): BookingRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    status: r.status as BookingRecord['status'],
    version: r.version,
    source: r.source as BookingRecord['source'],
    invitationId: r.invitation_id,
    eventTypeId: r.event_type_id,
    hostId: r.host_id,
    startAt: instant(r.start_at),
    endAt: instant(r.end_at),
    blockedFrom: instant(r.blocked_from),
    blockedTo: instant(r.blocked_to),
    guest: { name: r.guest_name, email: r.guest_email, timezone: r.guest_timezone },
    meetingType: r.meeting_type as BookingRecord['meetingType'],
    joinUrl: r.join_url,
    calendarStatus: r.calendar_status as BookingRecord['calendarStatus'],
    calendarErrorCode: r.calendar_error_code as BookingRecord['calendarErrorCode'],
    calendarWrittenAt: instantOrNull(r.calendar_written_at),
    metadata: r.metadata,
    createdAt: instant(r.created_at),
    rescheduledAt: instantOrNull(r.rescheduled_at),
    cancelledAt: instantOrNull(r.cancelled_at),
  };
}

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** Row lock until the transaction ends (as findBookingForUpdate): a concurrent reschedule or cancel waits. */
async function findForUpdate(tx: DbTx, workspaceId: string, id: string): Promise<BookingRecord | null> {
  const [row] = rowsOf<RawBookingRow>(
    await tx.execute(
      sql`SELECT id, workspace_id, status, version, source, invitation_id, event_type_id, host_id, start_at, end_at, blocked_from, blocked_to, guest_name, guest_email, guest_timezone, meeting_type, join_url, calendar_status, calendar_error_code, calendar_written_at, metadata, created_at, rescheduled_at, cancelled_at FROM booking.bookings WHERE workspace_id = ${workspaceId} AND id = ${id} FOR UPDATE`,
    ),
  );
  return row ? toRecord(row) : null;
}

/**
 * The calendar fields of `after` and, with an event, its outbox row and NOTIFY (@sched/messaging
 * enqueueEventSql, folded in as a data-modifying WITH): one round trip. The row is locked by findForUpdate
 * in the same transaction, so it is there; should it not be, `not_found` is thrown (as updateBooking does)
 * and the transaction, its outbox row with it, is rolled back.
 */
async function writeCalendar(tx: DbTx, after: BookingRecord, event: ReturnType<typeof announcementEnvelope> | undefined): Promise<void> {
  const update = sql`UPDATE booking.bookings SET calendar_status = ${after.calendarStatus}, calendar_error_code = ${after.calendarErrorCode}, join_url = ${after.joinUrl}, calendar_written_at = ${after.calendarWrittenAt?.toISOString() ?? null}::timestamptz WHERE workspace_id = ${after.workspaceId} AND id = ${after.id} RETURNING 1`;
  const statement = event
    ? sql`WITH u AS (${update}), e AS (${enqueueEventSql(outbox, event)}) SELECT count(*)::int AS updated FROM u`
    : sql`WITH u AS (${update}) SELECT count(*)::int AS updated FROM u`;
  const [row] = rowsOf<{ updated: number }>(await tx.execute(statement));
  if (row?.updated !== 1) throw new DomainError('not_found');
}
