import { DomainError } from '@sched/contracts';
import type { BookingRecord } from './booking';
import type { BookingUnitOfWork, SlotChecker } from './ports';
import { slotRefusal } from './slot-refusal';

/**
 * Refusals shared by reschedule and cancel, in the order decisions.md §2 gives (404 before 409). A cancelled
 * Booking answers booking_cancelled even when the version is also stale: re-reading would not help the
 * caller, since nothing can be done to a cancelled Booking.
 */
async function lockMutable(uow: BookingUnitOfWork, workspaceId: string, id: string, expectedVersion: number | undefined): Promise<BookingRecord> {
  const current = await uow.findForUpdate(workspaceId, id);
  if (!current) throw new DomainError('not_found');
  if (current.status === 'cancelled') throw new DomainError('booking_cancelled');
  if (expectedVersion !== undefined && expectedVersion !== current.version) {
    throw new DomainError('version_conflict', { details: [{ field: 'expected_version', issue: `current_version_${current.version}` }] });
  }
  return current;
}

/**
 * decisions.md §6: the new start must be bookable, ignoring the Booking's own current time; version +1,
 * rescheduled_at set, calendar back to pending until the provider matches again.
 */
export async function rescheduleBooking(
  deps: { slots: SlotChecker; uow: BookingUnitOfWork; now: Date },
  workspaceId: string,
  id: string,
  input: { startAt: Date; expectedVersion: number },
): Promise<BookingRecord> {
  const current = await lockMutable(deps.uow, workspaceId, id, input.expectedVersion);
  const check = await deps.slots.check(workspaceId, { eventTypeId: current.eventTypeId, startAt: input.startAt, excludeBookingId: current.id });
  if (!check.bookable) throw slotRefusal(check.reason, 'reschedule');

  const booking = await deps.uow.update(workspaceId, id, {
    version: current.version + 1,
    startAt: new Date(check.start_at),
    endAt: new Date(check.end_at),
    blockedFrom: new Date(check.blocked_from),
    blockedTo: new Date(check.blocked_to),
    rescheduledAt: deps.now,
    calendarStatus: 'pending',
    calendarErrorCode: null,
  });
  await deps.uow.announce({ type: 'booking.rescheduled', booking, occurredAt: deps.now });
  return booking;
}

/** decisions.md §6: optional expected_version; version +1, cancelled_at set, calendar back to pending. */
export async function cancelBooking(
  deps: { uow: BookingUnitOfWork; now: Date },
  workspaceId: string,
  id: string,
  input: { expectedVersion?: number },
): Promise<BookingRecord> {
  const current = await lockMutable(deps.uow, workspaceId, id, input.expectedVersion);
  const booking = await deps.uow.update(workspaceId, id, {
    status: 'cancelled',
    version: current.version + 1,
    cancelledAt: deps.now,
    calendarStatus: 'pending',
    calendarErrorCode: null,
  });
  await deps.uow.announce({ type: 'booking.cancelled', booking, occurredAt: deps.now });
  return booking;
}
