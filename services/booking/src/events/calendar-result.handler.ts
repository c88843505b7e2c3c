import { calendarSyncedDataSchema, calendarSyncFailedDataSchema } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { EventEnvelope, EventHandler } from '@sched/messaging';
import { applyCalendarResult, type CalendarResult } from '../domain/apply-calendar-result';
import { calendarResultUnitOfWork } from '../store/calendar-result.queries';

/** Routing keys this service consumes: calendar-sync's internal results. */
export const CALENDAR_RESULT_BINDINGS = ['calendar.synced', 'calendar.sync_failed'] as const;

function toResult(envelope: EventEnvelope): CalendarResult | null {
  if (envelope.type === 'calendar.synced') {
    const d = calendarSyncedDataSchema.parse(envelope.data);
    return { kind: 'synced', bookingId: d.booking_id, bookingVersion: d.booking_version, joinUrl: d.join_url };
  }
  if (envelope.type === 'calendar.sync_failed') {
    const d = calendarSyncFailedDataSchema.parse(envelope.data);
    return { kind: 'failed', bookingId: d.booking_id, bookingVersion: d.booking_version, errorCode: d.error_code };
  }
  return null;
}

/**
 * Applies calendar.synced / calendar.sync_failed to the Booking in the consumer's transaction (which also
 * holds the inbox row, so a redelivered event is skipped). A payload that does not parse throws: retried,
 * then dead-lettered for on-call, never silently dropped.
 */
export function calendarResultHandler(deps: { logger: Logger; clock?: () => Date }): EventHandler<DbTx> {
  const clock = deps.clock ?? (() => new Date());
  return async (envelope, tx) => {
    const result = toResult(envelope);
    if (!result) return;
    const outcome = await applyCalendarResult({ uow: calendarResultUnitOfWork(tx), now: clock() }, envelope.workspace_id, result);
    if (!outcome.apply) {
      deps.logger.info('calendar result not applied', { type: envelope.type, booking_id: result.bookingId, reason: outcome.reason });
    }
  };
}
