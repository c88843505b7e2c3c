import { z } from 'zod';
import { dataEnvelope, listEnvelope } from './envelopes';
import { bookingSchema } from './resources/booking';
import { bookingInvitationSchema, bookingInvitationWithUrlSchema } from './resources/booking-invitation';
import { eventTypeSchema } from './resources/event-type';
import { slotSchema } from './resources/slot';

/** Named success bodies of the v1 endpoints (api-v1.md "Endpoints"), for validation and OpenAPI. */
export const bookingResponseSchema = dataEnvelope(bookingSchema).meta({ id: 'BookingResponse', description: 'One Booking.' });
export const bookingListResponseSchema = listEnvelope(bookingSchema).meta({ id: 'BookingList', description: 'A page of Bookings.' });
export const eventTypeResponseSchema = dataEnvelope(eventTypeSchema).meta({ id: 'EventTypeResponse', description: 'One Event Type.' });
export const eventTypeListResponseSchema = listEnvelope(eventTypeSchema).meta({ id: 'EventTypeList', description: 'A page of Event Types.' });
export const slotListResponseSchema = dataEnvelope(z.array(slotSchema)).meta({
  id: 'SlotList',
  description: 'Available Slots in ascending start_at; meta has request_id only.',
});
export const bookingInvitationResponseSchema = dataEnvelope(bookingInvitationSchema).meta({
  id: 'BookingInvitationResponse',
  description: 'One Booking Invitation (read, revoke).',
});
export const bookingInvitationWithUrlResponseSchema = dataEnvelope(bookingInvitationWithUrlSchema).meta({
  id: 'BookingInvitationWithUrlResponse',
  description: 'A Booking Invitation with invitation_url (create, reissue).',
});
export const bookingInvitationListResponseSchema = listEnvelope(bookingInvitationSchema).meta({
  id: 'BookingInvitationList',
  description: 'A page of Booking Invitations, never with invitation_url.',
});
