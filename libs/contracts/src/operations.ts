import type { z } from 'zod';
import { listBookingInvitationsQuerySchema, createBookingInvitationBodySchema } from './requests/booking-invitations';
import { cancelBookingBodySchema, createBookingBodySchema, listBookingsQuerySchema, rescheduleBookingBodySchema } from './requests/bookings';
import { listEventTypesBodySchema, listEventTypesQuerySchema } from './requests/event-types';
import { listSlotsQuerySchema } from './requests/slots';
import {
  bookingInvitationListResponseSchema,
  bookingInvitationResponseSchema,
  bookingInvitationWithUrlResponseSchema,
  bookingListResponseSchema,
  bookingResponseSchema,
  eventTypeListResponseSchema,
  eventTypeResponseSchema,
  slotListResponseSchema,
} from './responses';
import type { Scope } from './scopes';

export interface V1Operation {
  operationId: string;
  method: 'GET' | 'POST';
  /** Express-style path; parameters as `:name` (api-v1.md names them bookingInvitation, booking, eventType). */
  path: string;
  /** decisions.md §3. */
  scope: Scope;
  status: 200 | 201;
  query?: z.ZodType;
  body?: z.ZodType;
  /** False where the body may be absent (cancel, event-types list). */
  bodyRequired?: boolean;
  response: z.ZodType;
}

/** The v1 endpoints of api-v1.md with the scope each needs: one table for gateway and OpenAPI. */
export const V1_OPERATIONS: readonly V1Operation[] = [
  {
    operationId: 'listBookingInvitations',
    method: 'GET',
    path: '/v1/booking-invitations',
    scope: 'booking_invitations:read',
    status: 200,
    query: listBookingInvitationsQuerySchema,
    response: bookingInvitationListResponseSchema,
  },
  {
    operationId: 'createBookingInvitation',
    method: 'POST',
    path: '/v1/booking-invitations',
    scope: 'booking_invitations:write',
    status: 201,
    body: createBookingInvitationBodySchema,
    bodyRequired: true,
    response: bookingInvitationWithUrlResponseSchema,
  },
  {
    operationId: 'getBookingInvitation',
    method: 'GET',
    path: '/v1/booking-invitations/:bookingInvitation',
    scope: 'booking_invitations:read',
    status: 200,
    response: bookingInvitationResponseSchema,
  },
  {
    operationId: 'revokeBookingInvitation',
    method: 'POST',
    path: '/v1/booking-invitations/:bookingInvitation/revoke',
    scope: 'booking_invitations:write',
    status: 200,
    response: bookingInvitationResponseSchema,
  },
  {
    operationId: 'reissueBookingInvitation',
    method: 'POST',
    path: '/v1/booking-invitations/:bookingInvitation/reissue',
    scope: 'booking_invitations:write',
    status: 200,
    response: bookingInvitationWithUrlResponseSchema,
  },
  {
    operationId: 'listBookings',
    method: 'GET',
    path: '/v1/bookings',
    scope: 'bookings:read',
    status: 200,
    query: listBookingsQuerySchema,
    response: bookingListResponseSchema,
  },
  {
    operationId: 'createBooking',
    method: 'POST',
    path: '/v1/bookings',
    scope: 'bookings:write',
    status: 201,
    body: createBookingBodySchema,
    bodyRequired: true,
    response: bookingResponseSchema,
  },
  {
    operationId: 'getBooking',
    method: 'GET',
    path: '/v1/bookings/:booking',
    scope: 'bookings:read',
    status: 200,
    response: bookingResponseSchema,
  },
  {
    operationId: 'cancelBooking',
    method: 'POST',
    path: '/v1/bookings/:booking/cancel',
    scope: 'bookings:write',
    status: 200,
    body: cancelBookingBodySchema,
    bodyRequired: false,
    response: bookingResponseSchema,
  },
  {
    operationId: 'rescheduleBooking',
    method: 'POST',
    path: '/v1/bookings/:booking/reschedule',
    scope: 'bookings:write',
    status: 200,
    body: rescheduleBookingBodySchema,
    bodyRequired: true,
    response: bookingResponseSchema,
  },
  {
    operationId: 'listEventTypes',
    method: 'GET',
    path: '/v1/event-types',
    scope: 'event_types:read',
    status: 200,
    query: listEventTypesQuerySchema,
    body: listEventTypesBodySchema,
    bodyRequired: false,
    response: eventTypeListResponseSchema,
  },
  {
    operationId: 'getEventType',
    method: 'GET',
    path: '/v1/event-types/:eventType',
    scope: 'event_types:read',
    status: 200,
    response: eventTypeResponseSchema,
  },
  {
    operationId: 'listSlots',
    method: 'GET',
    path: '/v1/event-types/:eventType/slots',
    scope: 'slots:read',
    status: 200,
    query: listSlotsQuerySchema,
    response: slotListResponseSchema,
  },
];
