import type { Booking, BookingInvitation, BookingInvitationWithUrl, EventType, ListMeta, Slot } from '@sched/contracts';
import { Paginator } from './paginator';
import type { Envelope, QueryValue, Transport } from './transport';
import type {
  CancelBookingInput,
  CreateBookingInput,
  CreateBookingInvitationInput,
  ListBookingInvitationsParams,
  ListBookingsParams,
  ListEventTypesParams,
  ListSlotsParams,
  Page,
  RequestOptions,
  RescheduleBookingInput,
} from './types';

/** Path segment of an identifier; an empty one would silently address the collection instead. */
function idSegment(id: string): string {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('an identifier is required');
  return encodeURIComponent(id);
}

function paginate<T>(transport: Transport, path: string, query: Record<string, QueryValue>, options?: RequestOptions): Paginator<T> {
  return new Paginator<T>(async (cursor) => {
    const res = await transport.send<Envelope<T[], ListMeta>>({ method: 'GET', path, query: { ...query, cursor }, options });
    return { data: res.data, next_cursor: res.meta.next_cursor, request_id: res.meta.request_id };
  });
}

async function one<T>(p: Promise<Envelope<T>>): Promise<T> {
  return (await p).data;
}

export class EventTypesResource {
  constructor(private readonly t: Transport) {}

  /**
   * GET /v1/event-types. cursor/limit go in the query string (decisions.md §5): fetch cannot send
   * the optional GET body api-v1.md describes.
   */
  list(params: ListEventTypesParams = {}, options?: RequestOptions): Paginator<EventType> {
    return paginate<EventType>(this.t, '/v1/event-types', { limit: params.limit }, options);
  }

  get(eventTypeId: string, options?: RequestOptions): Promise<EventType> {
    return one(this.t.send({ method: 'GET', path: `/v1/event-types/${idSegment(eventTypeId)}`, options }));
  }

  /** GET /v1/event-types/{id}/slots: bookable starts, not held. */
  slots(eventTypeId: string, params: ListSlotsParams, options?: RequestOptions): Promise<Slot[]> {
    return one(this.t.send({ method: 'GET', path: `/v1/event-types/${idSegment(eventTypeId)}/slots`, query: { ...params }, options }));
  }
}

export class BookingsResource {
  constructor(private readonly t: Transport) {}

  /** POST /v1/bookings. Retries reuse one Idempotency-Key, so a retried create never books twice. */
  create(body: CreateBookingInput, options?: RequestOptions): Promise<Booking> {
    return one(this.t.send({ method: 'POST', path: '/v1/bookings', body, options }));
  }

  get(bookingId: string, options?: RequestOptions): Promise<Booking> {
    return one(this.t.send({ method: 'GET', path: `/v1/bookings/${idSegment(bookingId)}`, options }));
  }

  list(params: ListBookingsParams = {}, options?: RequestOptions): Paginator<Booking> {
    return paginate<Booking>(this.t, '/v1/bookings', { ...params }, options);
  }

  reschedule(bookingId: string, body: RescheduleBookingInput, options?: RequestOptions): Promise<Booking> {
    return one(this.t.send({ method: 'POST', path: `/v1/bookings/${idSegment(bookingId)}/reschedule`, body, options }));
  }

  /** The body is optional; without `expected_version` the cancel does not check the version. */
  cancel(bookingId: string, body: CancelBookingInput = {}, options?: RequestOptions): Promise<Booking> {
    return one(this.t.send({ method: 'POST', path: `/v1/bookings/${idSegment(bookingId)}/cancel`, body, options }));
  }
}

export class BookingInvitationsResource {
  constructor(private readonly t: Transport) {}

  /** The answer carries invitation_url (a one-time credential): hand it on, do not log it. */
  create(body: CreateBookingInvitationInput, options?: RequestOptions): Promise<BookingInvitationWithUrl> {
    return one(this.t.send({ method: 'POST', path: '/v1/booking-invitations', body, options }));
  }

  get(invitationId: string, options?: RequestOptions): Promise<BookingInvitation> {
    return one(this.t.send({ method: 'GET', path: `/v1/booking-invitations/${idSegment(invitationId)}`, options }));
  }

  list(params: ListBookingInvitationsParams = {}, options?: RequestOptions): Paginator<BookingInvitation> {
    return paginate<BookingInvitation>(this.t, '/v1/booking-invitations', { ...params }, options);
  }

  revoke(invitationId: string, options?: RequestOptions): Promise<BookingInvitation> {
    return one(this.t.send({ method: 'POST', path: `/v1/booking-invitations/${idSegment(invitationId)}/revoke`, options }));
  }

  /** A new credential; the old invitation_url stops working at once. */
  reissue(invitationId: string, options?: RequestOptions): Promise<BookingInvitationWithUrl> {
    return one(this.t.send({ method: 'POST', path: `/v1/booking-invitations/${idSegment(invitationId)}/reissue`, options }));
  }
}

export type { Page };
