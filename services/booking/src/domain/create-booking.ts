import { DomainError, newId, type BookingSource, type SlotCheckResponse } from '@sched/contracts';
import { replayFoundRow, type StoredResponse } from '@sched/idempotency';
import type { BookingRecord } from './booking';
import type { BookingCreates, CreateKey, CreateWrite, SlotChecker } from './ports';
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

export interface CreateBookingCommand {
  workspaceId: string;
  input: CreateBookingInput;
  /** The request's Idempotency-Key, or undefined when it has none. */
  key: CreateKey | undefined;
  requestId: string;
}

export interface CreateBookingDeps {
  slots: SlotChecker;
  creates: BookingCreates;
  clock: () => Date;
}

/**
 * A new Booking (with a key, `answer` is the 201 body stored under it: the first answer and every replay
 * are the same bytes), or the answer a finished request with the same key gave (sent again as it was).
 */
export type CreateOutcome =
  | { kind: 'created'; booking: BookingRecord; answer?: string }
  | { kind: 'replayed'; answer: StoredResponse & { headers: Record<string, string> } };

/**
 * Creates a Booking (decisions.md §4, §6), for the public API and the hosted booking page alike.
 *
 * 1. Validate: the command arrives parsed (the contract's body schema and the Idempotency-Key's syntax are
 *    checked at the edge, before anything is asked).
 * 2. Ask availability whether the start is a Slot it would offer now. Asked before anything is written, so
 *    no database connection waits on availability. A failed check is kept, not thrown: a retry of a
 *    finished request must still replay while availability is down.
 * 3. Write, under the key: the confirmed Booking (version 1, calendar pending) and its booking.created
 *    event; or the refusal; or nothing for a failed check. The key's protocol runs first in the same
 *    transaction, so a finished or running request under the key wins over whatever the check said now.
 * 4. Outcome: created; replayed (or 422 for the key with another body); 409 in progress; 409 slot_unavailable
 *    when another create won the slot after the check (the no-overlap constraint); the check's refusal or
 *    failure. Refusals are thrown DomainErrors; with a key the 4xx ones were stored as that same answer.
 */
export async function createBooking(deps: CreateBookingDeps, command: CreateBookingCommand): Promise<CreateOutcome> {
  const { key, requestId } = command;

  const write = await askSlot(deps, command);

  const written = await deps.creates.write(write);

  if (written.kind === 'found') return { kind: 'replayed', answer: replayFoundRow(written.row, { id: key!.id, fingerprint: key!.fingerprint, requestId }) };
  if (written.kind === 'in_progress') throw new DomainError('idempotency_request_in_progress', { retryAfterSeconds: 1 });
  if (write.kind === 'fail') throw write.failure;
  if (write.kind === 'refuse') throw write.refusal;
  if (written.kind === 'slot_taken') throw new DomainError('slot_unavailable');
  return { kind: 'created', booking: write.booking, answer: written.kind === 'created' ? written.answer : undefined };
}

/**
 * Step 2: the slot check's answer as the write it leads to (each kind's object written out: see createBatchRow
 * on spreads).
 */
async function askSlot(deps: CreateBookingDeps, { workspaceId, input, key, requestId }: CreateBookingCommand): Promise<CreateWrite> {
  let check: SlotCheckResponse;
  try {
    check = await deps.slots.check(workspaceId, { eventTypeId: input.eventTypeId, startAt: input.startAt });
  } catch (failure) {
    return { kind: 'fail', failure, workspaceId, key, requestId };
  }
  if (!check.bookable) return { kind: 'refuse', refusal: slotRefusal(check.reason, 'create'), workspaceId, key, requestId };
  const now = deps.clock();
  const booking = newBookingRecord(workspaceId, input, check, now);
  return { kind: 'insert', booking, announcement: { type: 'booking.created', booking, occurredAt: now }, workspaceId, key, requestId };
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
