import { makeEvent, toTimestamp, type Booking, type EventMessage } from '@sched/contracts';
import type { EventEnvelope } from '@sched/messaging';
import { toBookingResource, type BookingRecord } from '../domain/booking';
import type { BookingAnnouncement } from '../domain/ports';

/** The `internal` part of a booking.* event: what other services need of a Booking beyond its API form. */
export interface BookingInternal {
  blocked_from: string;
  blocked_to: string;
  invitation_id: string | null;
}

/** `internal` of the Booking's booking.* events (its blocked range as timestamps, its invitation). */
export function bookingInternal(booking: BookingRecord): BookingInternal {
  return { blocked_from: toTimestamp(booking.blockedFrom), blocked_to: toTimestamp(booking.blockedTo), invitation_id: booking.invitationId };
}

/**
 * The message for an announced change (contracts events.ts). booking.* carry the Booking as the API returns
 * it plus `internal` (blocked range, invitation) for other services; calendar.* carry the Booking after the
 * calendar change. Ids are fresh `wev_` ids: for public kinds the webhook-id receivers deduplicate on.
 * `resource` and `internal`: the announced Booking already in API form (toBookingResource of `event.booking`)
 * and its bookingInternal, when the caller has them (the create's row uses their timestamps too).
 */
export function announcementEnvelope(event: BookingAnnouncement, resource: Booking = toBookingResource(event.booking), internal?: BookingInternal): EventEnvelope {
  const { booking } = event;
  // Written out, not spread from a common part (see createBatchRow: each property after a spread costs).
  const workspaceId = booking.workspaceId;
  const occurredAt = event.occurredAt;
  let message: EventMessage;
  switch (event.type) {
    case 'booking.created':
    case 'booking.rescheduled':
    case 'booking.cancelled':
      message = makeEvent(event.type, {
        workspaceId,
        occurredAt,
        data: {
          booking: resource,
          internal: internal ?? bookingInternal(booking),
        },
      });
      break;
    case 'calendar.created':
      message = makeEvent('calendar.created', { workspaceId, occurredAt, data: { booking: resource } });
      break;
    case 'calendar.failed':
      message = makeEvent('calendar.failed', { workspaceId, occurredAt, data: { booking: resource, error_code: event.errorCode } });
      break;
  }
  return message;
}
