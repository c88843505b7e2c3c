import type { CalendarErrorCode } from '@sched/contracts';
import type { BookingRecord } from './booking';
import type { BookingAnnouncement, BookingChanges, CalendarResultUnitOfWork } from './ports';

/** What calendar-sync reports about one Booking version (internal events calendar.synced / sync_failed). */
export type CalendarResult =
  | { kind: 'synced'; bookingId: string; bookingVersion: number; joinUrl: string | null }
  | { kind: 'failed'; bookingId: string; bookingVersion: number; errorCode: CalendarErrorCode };

export type CalendarDecision =
  | { apply: false; reason: 'stale' | 'unknown_version' | 'unchanged' }
  | { apply: true; changes: BookingChanges; publish: 'calendar.created' | 'calendar.failed' | null };

/**
 * Pure rule for one result. Only a result for the Booking's current version applies: an older one describes
 * a time the Booking no longer has (a later reschedule or cancel is already on its way to the calendar).
 * `version` is not touched: it counts API mutations, which a calendar update is not.
 */
export function decideCalendarChange(booking: BookingRecord, result: CalendarResult, now: Date): CalendarDecision {
  if (result.bookingVersion < booking.version) return { apply: false, reason: 'stale' };
  if (result.bookingVersion > booking.version) return { apply: false, reason: 'unknown_version' };

  if (result.kind === 'failed') {
    if (booking.calendarStatus === 'failed' && booking.calendarErrorCode === result.errorCode) return { apply: false, reason: 'unchanged' };
    return { apply: true, changes: { calendarStatus: 'failed', calendarErrorCode: result.errorCode }, publish: 'calendar.failed' };
  }

  // decisions.md §6: join_url is only ever filled for video meetings.
  const joinUrl = booking.meetingType === 'video' ? (result.joinUrl ?? booking.joinUrl) : null;
  const firstWrite = booking.status === 'confirmed' && booking.calendarWrittenAt === null;
  if (!firstWrite && booking.calendarStatus === 'synced' && booking.joinUrl === joinUrl && booking.calendarErrorCode === null) {
    return { apply: false, reason: 'unchanged' };
  }
  return {
    apply: true,
    changes: { calendarStatus: 'synced', calendarErrorCode: null, joinUrl, ...(firstWrite ? { calendarWrittenAt: now } : {}) },
    publish: firstWrite ? 'calendar.created' : null,
  };
}

/**
 * Applies a calendar result to its Booking and publishes calendar.created / calendar.failed with the Booking
 * after it. The Booking after the change is the locked row with the decided changes (a calendar result touches
 * only calendar fields), written with its announcement in one statement.
 */
export async function applyCalendarResult(
  deps: { uow: CalendarResultUnitOfWork; now: Date },
  workspaceId: string,
  result: CalendarResult,
): Promise<CalendarDecision | { apply: false; reason: 'not_found' }> {
  const current = await deps.uow.findForUpdate(workspaceId, result.bookingId);
  if (!current) return { apply: false, reason: 'not_found' };
  const decision = decideCalendarChange(current, result, deps.now);
  if (!decision.apply) return decision;
  const booking: BookingRecord = { ...current, ...decision.changes };
  let announcement: BookingAnnouncement | undefined;
  if (decision.publish === 'calendar.created') announcement = { type: 'calendar.created', booking, occurredAt: deps.now };
  if (decision.publish === 'calendar.failed' && result.kind === 'failed') announcement = { type: 'calendar.failed', booking, errorCode: result.errorCode, occurredAt: deps.now };
  await deps.uow.writeCalendar(booking, announcement);
  return decision;
}
