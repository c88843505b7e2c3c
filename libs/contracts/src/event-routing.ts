/**
 * Routing keys on the events exchange (libs/messaging README "Routing keys"): the event's kind, then
 * qualifiers the publisher adds so a consumer can bind only the events it has an effect for. The message's
 * `type` (what consumers parse and webhooks announce) is the kind alone. A consumer binding a kind
 * receives every qualified key of it (`<kind>.#`).
 */

/** booking.created of a Booking made through an invitation (data.internal.invitation_id set): what invitation binds. */
export const BOOKING_CREATED_WITH_INVITATION = 'booking.created.invitation';
/** booking.created of a Booking made without one (the API, a public booking page). */
export const BOOKING_CREATED_WITHOUT_INVITATION = 'booking.created.no_invitation';

/**
 * The routing key booking publishes a message with: booking.created says whether an invitation was
 * involved; every other kind is routed by its kind. Reads only `type` and `data.internal.invitation_id`.
 */
export function eventRoutingKey(message: { type: string; data: unknown }): string {
  if (message.type !== 'booking.created') return message.type;
  const data = message.data as { internal?: { invitation_id?: unknown } | null } | null;
  const invitationId = data !== null && typeof data === 'object' ? data.internal?.invitation_id : undefined;
  return invitationId !== undefined && invitationId !== null ? BOOKING_CREATED_WITH_INVITATION : BOOKING_CREATED_WITHOUT_INVITATION;
}
