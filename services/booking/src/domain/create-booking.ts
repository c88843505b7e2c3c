import { newId, type BookingSource } from '@sched/contracts';
import type { BookingRecord } from './booking';
import type { BookingUnitOfWork, SlotChecker } from './ports';
import { slotRefusal } from './slot-refusal';

export interface CreateBookingInput {
  /** `api` for POST /v1/bookings, `booking_page` for the hosted page's internal create. */
  source: BookingSource;
  invitationId: string | null;
  eventTypeId: string;
  startAt: Date;
  guest: { name: string; email: string; timezone: string };
  metadata: Record<string, unknown>;
}

/**
 * decisions.md §6: the start must be a Slot the availability service would offer now; the Booking is
 * confirmed at version 1 with its calendar pending. The prior check can race with another create, so the
 * insert itself is guarded by the no-overlap constraint (slot_unavailable when it loses).
 */
export async function createBooking(
  deps: { slots: SlotChecker; uow: BookingUnitOfWork; now: Date },
  workspaceId: string,
  input: CreateBookingInput,
): Promise<BookingRecord> {
  const check = await deps.slots.check(workspaceId, { eventTypeId: input.eventTypeId, startAt: input.startAt });
  if (!check.bookable) throw slotRefusal(check.reason, 'create');

  const booking = await deps.uow.insert({
    id: newId('bkg'),
    workspaceId,
    status: 'confirmed',
    version: 1,
    source: input.source,
    invitationId: input.invitationId,
    eventTypeId: check.event_type_id,
    hostId: check.host_id,
    startAt: new Date(check.start_at),
    endAt: new Date(check.end_at),
    blockedFrom: new Date(check.blocked_from),
    blockedTo: new Date(check.blocked_to),
    guest: input.guest,
    meetingType: check.meeting_type,
    joinUrl: null,
    calendarStatus: 'pending',
    calendarErrorCode: null,
    calendarWrittenAt: null,
    metadata: input.metadata,
    createdAt: deps.now,
    rescheduledAt: null,
    cancelledAt: null,
  });
  await deps.uow.announce({ type: 'booking.created', booking, occurredAt: deps.now });
  return booking;
}
