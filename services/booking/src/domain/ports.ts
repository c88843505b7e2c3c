import type { CalendarErrorCode, SlotCheckResponse } from '@sched/contracts';
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

/** Storage inside one transaction: every method is scoped by workspace and sees the transaction's writes. */
export interface BookingUnitOfWork {
  /** Inserts a confirmed Booking; throws DomainError slot_unavailable when it overlaps another of the host. */
  insert(booking: BookingRecord): Promise<BookingRecord>;
  /** Reads and row-locks a Booking until the transaction ends; null when not in this workspace. */
  findForUpdate(workspaceId: string, id: string): Promise<BookingRecord | null>;
  /** Applies changes; throws DomainError slot_unavailable when the new range overlaps another Booking. */
  update(workspaceId: string, id: string, changes: BookingChanges): Promise<BookingRecord>;
  announce(event: BookingAnnouncement): Promise<void>;
}
