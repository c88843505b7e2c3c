import { newId, type BookingSource, type SlotCheckResponse } from '@sched/contracts';
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

/** The slot check's answer, or the error it failed with (kept, not thrown: see answeredSlotChecker). */
export type SlotAnswer = { ok: true; value: SlotCheckResponse } | { ok: false; error: unknown };

/** Asks the slot check and keeps its answer or its failure. */
export function askSlot(slots: SlotChecker, workspaceId: string, request: { eventTypeId: string; startAt: Date }): Promise<SlotAnswer> {
  return slots.check(workspaceId, request).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/**
 * A SlotChecker that answers the question asked ahead from its answer. The create asks before opening its
 * transaction, so no database connection is held while availability answers. A failed check (503,
 * unreachable) is kept, not thrown: a retried request whose Idempotency-Key already has an answer still
 * replays it; only a request that really executes fails with the check's error.
 */
export function answeredSlotChecker(slots: SlotChecker, workspaceId: string, request: { eventTypeId: string; startAt: Date }, answer: SlotAnswer): SlotChecker {
  return {
    check: async (ws, req) => {
      if (ws !== workspaceId || req.eventTypeId !== request.eventTypeId || req.startAt.getTime() !== request.startAt.getTime() || req.excludeBookingId) {
        return slots.check(ws, req); // not the question asked ahead: ask it
      }
      if (!answer.ok) throw answer.error;
      return answer.value;
    },
  };
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

  const booking = await deps.uow.insert(newBookingRecord(workspaceId, input, check, deps.now));
  await deps.uow.announce({ type: 'booking.created', booking, occurredAt: deps.now });
  return booking;
}

/** The Booking a create makes from a "bookable" slot check: confirmed, version 1, calendar pending (decisions.md §6). */
export function newBookingRecord(
  workspaceId: string,
  input: CreateBookingInput,
  check: Extract<SlotCheckResponse, { bookable: true }>,
  now: Date,
): BookingRecord {
  return {
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
    createdAt: now,
    rescheduledAt: null,
    cancelledAt: null,
  };
}
