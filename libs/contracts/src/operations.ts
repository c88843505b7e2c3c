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

/** The services that own public v1 operations: the gateway forwards each operation to its owner. */
export const V1_OWNERS = ['booking', 'availability', 'invitation'] as const;
export type V1Owner = (typeof V1_OWNERS)[number];

/**
 * One public v1 operation (api-v1.md "Endpoints"). This table is the one place that names it: the
 * gateway routes and scope-checks from it, the owner registers its handler from it (libs/http
 * registerOperations: method, path, zod parsing), and the OpenAPI document is built from it.
 */
export interface V1Operation {
  operationId: string;
  /** The service that answers it; the gateway forwards the request there. */
  owner: V1Owner;
  method: 'GET' | 'POST';
  /** Express-style path; parameters as `:name` (api-v1.md names them bookingInvitation, booking, eventType). */
  path: string;
  /** decisions.md §3. */
  scope: Scope;
  status: 200 | 201;
  /** The query parameters; none given: the operation takes none (an unknown one is 400, decisions.md §1). */
  query?: z.ZodType;
  /** The JSON body; none given: the operation takes none (absent or `{}`; any field is 400 unknown_field). */
  body?: z.ZodType;
  /** False where the body may be absent (cancel, event-types list). */
  bodyRequired?: boolean;
  /** A retry with the same Idempotency-Key replays the first answer (decisions.md §4): every POST. */
  idempotent: boolean;
  response: z.ZodType;
}

/** The v1 endpoints of api-v1.md with the scope and owner of each: one table for gateway, services and OpenAPI. */
export const V1_OPERATIONS = [
  {
    operationId: 'listBookingInvitations',
    method: 'GET',
    path: '/v1/booking-invitations',
    owner: 'invitation',
    scope: 'booking_invitations:read',
    idempotent: false,
    status: 200,
    query: listBookingInvitationsQuerySchema,
    response: bookingInvitationListResponseSchema,
  },
  {
    operationId: 'createBookingInvitation',
    method: 'POST',
    path: '/v1/booking-invitations',
    owner: 'invitation',
    scope: 'booking_invitations:write',
    idempotent: true,
    status: 201,
    body: createBookingInvitationBodySchema,
    bodyRequired: true,
    response: bookingInvitationWithUrlResponseSchema,
  },
  {
    operationId: 'getBookingInvitation',
    method: 'GET',
    path: '/v1/booking-invitations/:bookingInvitation',
    owner: 'invitation',
    scope: 'booking_invitations:read',
    idempotent: false,
    status: 200,
    response: bookingInvitationResponseSchema,
  },
  {
    operationId: 'revokeBookingInvitation',
    method: 'POST',
    path: '/v1/booking-invitations/:bookingInvitation/revoke',
    owner: 'invitation',
    scope: 'booking_invitations:write',
    idempotent: true,
    status: 200,
    response: bookingInvitationResponseSchema,
  },
  {
    operationId: 'reissueBookingInvitation',
    method: 'POST',
    path: '/v1/booking-invitations/:bookingInvitation/reissue',
    owner: 'invitation',
    scope: 'booking_invitations:write',
    idempotent: true,
    status: 200,
    response: bookingInvitationWithUrlResponseSchema,
  },
  {
    operationId: 'listBookings',
    method: 'GET',
    path: '/v1/bookings',
    owner: 'booking',
    scope: 'bookings:read',
    idempotent: false,
    status: 200,
    query: listBookingsQuerySchema,
    response: bookingListResponseSchema,
  },
  {
    operationId: 'createBooking',
    method: 'POST',
    path: '/v1/bookings',
    owner: 'booking',
    scope: 'bookings:write',
    idempotent: true,
    status: 201,
    body: createBookingBodySchema,
    bodyRequired: true,
    response: bookingResponseSchema,
  },
  {
    operationId: 'getBooking',
    method: 'GET',
    path: '/v1/bookings/:booking',
    owner: 'booking',
    scope: 'bookings:read',
    idempotent: false,
    status: 200,
    response: bookingResponseSchema,
  },
  {
    operationId: 'cancelBooking',
    method: 'POST',
    path: '/v1/bookings/:booking/cancel',
    owner: 'booking',
    scope: 'bookings:write',
    idempotent: true,
    status: 200,
    body: cancelBookingBodySchema,
    bodyRequired: false,
    response: bookingResponseSchema,
  },
  {
    operationId: 'rescheduleBooking',
    method: 'POST',
    path: '/v1/bookings/:booking/reschedule',
    owner: 'booking',
    scope: 'bookings:write',
    idempotent: true,
    status: 200,
    body: rescheduleBookingBodySchema,
    bodyRequired: true,
    response: bookingResponseSchema,
  },
  {
    operationId: 'listEventTypes',
    method: 'GET',
    path: '/v1/event-types',
    owner: 'availability',
    scope: 'event_types:read',
    idempotent: false,
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
    owner: 'availability',
    scope: 'event_types:read',
    idempotent: false,
    status: 200,
    response: eventTypeResponseSchema,
  },
  {
    operationId: 'listSlots',
    method: 'GET',
    path: '/v1/event-types/:eventType/slots',
    owner: 'availability',
    scope: 'slots:read',
    idempotent: false,
    status: 200,
    query: listSlotsQuerySchema,
    response: slotListResponseSchema,
  },
] as const satisfies readonly V1Operation[];

type Operations = (typeof V1_OPERATIONS)[number];
export type V1OperationId = Operations['operationId'];
/** The table entry of one operation, with its exact path and schemas. */
export type V1OperationById<Id extends V1OperationId> = Extract<Operations, { operationId: Id }>;
/** The ids of the operations one service owns. */
export type V1OperationIdOf<Owner extends V1Owner> = Extract<Operations, { owner: Owner }>['operationId'];

/** The `:name` parameters of an Express-style path, e.g. `'booking'` for `/v1/bookings/:booking/cancel`. */
export type PathParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** The operations one service owns, in table order. */
export function v1OperationsOf(owner: V1Owner): V1Operation[] {
  return V1_OPERATIONS.filter((op) => op.owner === owner);
}
