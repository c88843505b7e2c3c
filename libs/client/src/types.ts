import type { z } from 'zod';
import type {
  cancelBookingBodySchema,
  createBookingBodySchema,
  createBookingInvitationBodySchema,
  listBookingInvitationsQuerySchema,
  listBookingsQuerySchema,
  listSlotsQuerySchema,
  rescheduleBookingBodySchema,
} from '@sched/contracts';

/**
 * Request types are the wire (input) form of the contracts schemas the services validate with;
 * the client also takes a Date wherever a timestamp goes and sends it as RFC 3339 UTC.
 */
export type TimestampInput = string | Date;

type In<S extends z.ZodType> = z.input<S>;

export type CreateBookingInput = Omit<In<typeof createBookingBodySchema>, 'start_at'> & { start_at: TimestampInput };
export type RescheduleBookingInput = Omit<In<typeof rescheduleBookingBodySchema>, 'start_at'> & { start_at: TimestampInput };
export type CancelBookingInput = In<typeof cancelBookingBodySchema>;
export type CreateBookingInvitationInput = Omit<In<typeof createBookingInvitationBodySchema>, 'expires_at' | 'not_before'> & {
  expires_at: TimestampInput;
  not_before?: TimestampInput | null;
};

/** `limit` is a number here; the client writes it into the query string. Cursors are handled by the paginator. */
export type ListBookingsParams = Omit<In<typeof listBookingsQuerySchema>, 'limit' | 'cursor' | 'starts_from' | 'starts_to'> & {
  limit?: number;
  starts_from?: TimestampInput;
  starts_to?: TimestampInput;
};
export type ListBookingInvitationsParams = Omit<In<typeof listBookingInvitationsQuerySchema>, 'limit' | 'cursor'> & { limit?: number };
export interface ListEventTypesParams {
  limit?: number;
}
export type ListSlotsParams = In<typeof listSlotsQuerySchema>;

/** One page of a list: the items, the cursor of the next page (null on the last) and the request id. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  request_id: string;
}

export interface RequestOptions {
  /** Idempotency-Key of a POST; by default a fresh UUID per call, reused by its retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number;
}

export type {
  Booking,
  BookingInvitation,
  BookingInvitationWithUrl,
  EventType,
  Slot,
  WebhookBody,
  ErrorDetail,
  PublicEventKind,
} from '@sched/contracts';
