import { makeEvent, toTimestamp, type EventMessage } from '@sched/contracts';
import type { EventEnvelope } from '@sched/messaging';
import { toBookingResource } from '../domain/booking';
import type { BookingAnnouncement } from '../domain/ports';

/**
 * The message for an announced change (contracts events.ts). booking.* carry the Booking as the API returns
 * it plus `internal` (blocked range, invitation) for other services; calendar.* carry the Booking after the
 * calendar change. Ids are fresh `wev_` ids: for public kinds the webhook-id receivers deduplicate on.
 */
export function announcementEnvelope(event: BookingAnnouncement): EventEnvelope {
  const { booking } = event;
  const resource = toBookingResource(booking);
  const common = { workspaceId: booking.workspaceId, occurredAt: event.occurredAt };
  let message: EventMessage;
  switch (event.type) {
    case 'booking.created':
    case 'booking.rescheduled':
    case 'booking.cancelled':
      message = makeEvent(event.type, {
        ...common,
        data: {
          booking: resource,
          internal: { blocked_from: toTimestamp(booking.blockedFrom), blocked_to: toTimestamp(booking.blockedTo), invitation_id: booking.invitationId },
        },
      });
      break;
    case 'calendar.created':
      message = makeEvent('calendar.created', { ...common, data: { booking: resource } });
      break;
    case 'calendar.failed':
      message = makeEvent('calendar.failed', { ...common, data: { booking: resource, error_code: event.errorCode } });
      break;
  }
  return message;
}
