import { sql } from 'drizzle-orm';
import { DomainError } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import { enqueueEventSql } from '@sched/messaging';
import type { BookingRecord } from '../domain/booking';
import type { CalendarResultUnitOfWork } from '../domain/ports';
import { announcementEnvelope } from '../events/booking-events';
import { toBookingRecord, type BookingRow } from './booking.queries';
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

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/**
 * Row lock until the transaction ends (as findBookingForUpdate): a concurrent reschedule or cancel waits.
 * The columns are selected under drizzle's property names, so the row maps through the store's one
 * toBookingRecord (booking.queries.ts), which parses the timestamptz text drizzle's raw execute leaves.
 */
async function findForUpdate(tx: DbTx, workspaceId: string, id: string): Promise<BookingRecord | null> {
  const [row] = rowsOf<BookingRow>(
    await tx.execute(
      sql`SELECT id, workspace_id AS "workspaceId", status, version, source, invitation_id AS "invitationId", event_type_id AS "eventTypeId", host_id AS "hostId", start_at AS "startAt", end_at AS "endAt", blocked_from AS "blockedFrom", blocked_to AS "blockedTo", guest_name AS "guestName", guest_email AS "guestEmail", guest_timezone AS "guestTimezone", meeting_type AS "meetingType", join_url AS "joinUrl", calendar_status AS "calendarStatus", calendar_error_code AS "calendarErrorCode", calendar_written_at AS "calendarWrittenAt", metadata, created_at AS "createdAt", rescheduled_at AS "rescheduledAt", cancelled_at AS "cancelledAt" FROM booking.bookings WHERE workspace_id = ${workspaceId} AND id = ${id} FOR UPDATE`,
    ),
  );
  return row ? toBookingRecord(row) : null;
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
