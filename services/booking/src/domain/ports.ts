import type { CalendarErrorCode, DomainError, SlotCheckResponse } from '@sched/contracts';
import type { FoundIdempotencyRow } from '@sched/idempotency';
import type { BookingRecord } from './booking';

/**
 * The availability service's slot check (libs/contracts internal.ts). Implementations throw a DomainError
 * when no answer can be had (fail closed): 503 calendar_unavailable, 502/504 upstream_unavailable.
 */
export interface SlotChecker {
  check(workspaceId: string, request: { eventTypeId: string; startAt: Date; excludeBookingId?: string }): Promise<SlotCheckResponse>;
}

/** What changed, announced through the outbox in the same transaction as the change. */
export type BookingAnnouncement =
  | { type: 'booking.created' | 'booking.rescheduled' | 'booking.cancelled' | 'calendar.created'; booking: BookingRecord; occurredAt: Date }
  | { type: 'calendar.failed'; booking: BookingRecord; errorCode: CalendarErrorCode; occurredAt: Date };

export type BookingChanges = Partial<
  Pick<
    BookingRecord,
    | 'status'
    | 'version'
    | 'startAt'
    | 'endAt'
    | 'blockedFrom'
    | 'blockedTo'
    | 'joinUrl'
    | 'calendarStatus'
    | 'calendarErrorCode'
    | 'calendarWrittenAt'
    | 'rescheduledAt'
    | 'cancelledAt'
  >
>;

/** Storage inside one transaction (reschedule, cancel): every method is scoped by workspace and sees the transaction's writes. */
export interface BookingUnitOfWork {
  /** Reads and row-locks a Booking until the transaction ends; null when not in this workspace. */
  findForUpdate(workspaceId: string, id: string): Promise<BookingRecord | null>;
  /** Applies changes; throws DomainError slot_unavailable when the new range overlaps another Booking. */
  update(workspaceId: string, id: string, changes: BookingChanges): Promise<BookingRecord>;
  announce(event: BookingAnnouncement): Promise<void>;
}

/**
 * Storage of one calendar result, inside the consumer's transaction (which also holds the event's inbox row):
 * every method is scoped by workspace and sees the transaction's writes.
 */
export interface CalendarResultUnitOfWork {
  /** Reads and row-locks a Booking until the transaction ends; null when not in this workspace. */
  findForUpdate(workspaceId: string, id: string): Promise<BookingRecord | null>;
  /**
   * Writes the calendar fields of the locked Booking as `after` has them (its calendar status, error code,
   * join URL and first-written time; nothing else changes) and, when given, enqueues `announcement` of
   * `after` with it: one statement.
   */
  writeCalendar(after: BookingRecord, announcement?: BookingAnnouncement): Promise<void>;
}

/**
 * A create's Idempotency-Key (decisions.md §4): the key row's id and advisory lock key
 * (@sched/idempotency idempotencyRowIdentity) and the request's fingerprint.
 */
export interface CreateKey {
  id: string;
  lockKey: string;
  fingerprint: string;
}

/**
 * One create to write. `insert`: the Booking a "bookable" check made, and its booking.created event.
 * `refuse`: the check's 4xx refusal, stored under the key. `fail`: the check could not be had (5xx); nothing
 * is stored. All three first run the key's protocol, so a finished request under the key replays whatever
 * the check says now.
 */
export type CreateWrite = { workspaceId: string; key: CreateKey | undefined; requestId: string } & (
  | { kind: 'insert'; booking: BookingRecord; announcement: BookingAnnouncement }
  | { kind: 'refuse'; refusal: DomainError }
  | { kind: 'fail'; failure: unknown }
);

/** How a write ended: the first three say what was done, `found`/`in_progress` what the key held instead. */
export type CreateWritten =
  /** Inserted; with a key, `answer` is the 201 body stored under it (the bytes a replay will send). */
  | { kind: 'created'; answer?: string }
  /** The no-overlap constraint refused the insert: another Booking won the slot after the check. */
  | { kind: 'slot_taken' }
  | { kind: 'refused' }
  | { kind: 'failed' }
  /** A finished request under the key: its stored answer (nothing was written). */
  | { kind: 'found'; row: FoundIdempotencyRow }
  /** A request under the key is running now (nothing was written). */
  | { kind: 'in_progress' };

/**
 * The store of creates. Each write runs, in ONE transaction, @sched/idempotency's protocol for its key (lock,
 * live lookup; a found or locked key ends the write there), then the write, the booking.created outbox row
 * and the key row with the answer the create gets: the Booking (201) when it was inserted, 409
 * slot_unavailable when the constraint refused it, the refusal's own answer for `refuse`. Which of those
 * applies is known only inside the transaction, so the store is given the data of each and records the one
 * that happened (the store's contract; it computes the stored answers with @sched/idempotency's envelopes).
 * Creates arriving together share one transaction (group commit, a store detail); the answer is returned
 * only after the commit.
 */
export interface BookingCreates {
  write(create: CreateWrite): Promise<CreateWritten>;
}
