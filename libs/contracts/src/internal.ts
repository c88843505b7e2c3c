import { z } from 'zod';
import { REQUEST_ID_HEADER_RE } from './headers';
import { idSchema } from './ids';
import { meetingTypeSchema } from './resources/values';
import { createBookingBodySchema } from './requests/bookings';
import { timestampInputSchema, timestampSchema, timezoneSchema } from './time';

/**
 * Service-to-service HTTP APIs (never routed by the gateway; the workspace is in the path and every
 * query is filtered by it again). Answers use the usual envelopes; errors the usual codes.
 */

/**
 * calendar-sync: GET /internal/v1/workspaces/{ws}/hosts/{host}/busy?from=&to=
 * Busy intervals of the host's calendar overlapping [from, to), from a snapshot no older than the
 * freshness bound, EXCLUDING the events this service wrote for Bookings (availability has those).
 * 404 not_found: no calendar connected. 503 calendar_unavailable (+ Retry-After): provider down and
 * no fresh snapshot (fail closed).
 */
export const busyQuerySchema = z.strictObject({ from: timestampInputSchema, to: timestampInputSchema });

export const busyResponseSchema = z
  .strictObject({
    host_id: idSchema('hst'),
    snapshot_at: timestampSchema,
    intervals: z.array(z.strictObject({ start_at: timestampSchema, end_at: timestampSchema })),
  })
  .meta({ id: 'InternalBusy', description: 'Internal: busy intervals of a host calendar.' });

/**
 * availability: POST /internal/v1/workspaces/{ws}/slot-check
 * Is `start_at` a start the Slots query would return now? `exclude_booking_id`: the Booking being
 * rescheduled, whose own blocked time must not block it. 503 calendar_unavailable when busy times
 * cannot be read (fail closed).
 */
export const slotCheckRequestSchema = z.strictObject({
  event_type_id: z.string().min(1).max(40),
  start_at: timestampInputSchema,
  exclude_booking_id: idSchema('bkg').optional(),
});

export const slotCheckResponseSchema = z.discriminatedUnion('bookable', [
  z.strictObject({
    bookable: z.literal(true),
    event_type_id: idSchema('evt'),
    host_id: idSchema('hst'),
    start_at: timestampSchema,
    end_at: timestampSchema,
    /** start − buffer_before, end + buffer_after: the range the booking service's exclusion constraint holds. */
    blocked_from: timestampSchema,
    blocked_to: timestampSchema,
    meeting_type: meetingTypeSchema,
  }),
  z.strictObject({
    bookable: z.literal(false),
    /** not_found: no such Event Type in the workspace (→ 422 invalid_reference at create). */
    reason: z.enum(['not_found', 'event_type_not_bookable', 'slot_unavailable']),
  }),
]);

/** Most checks one `slot-checks` request may carry. */
export const SLOT_CHECKS_MAX = 64;

/**
 * availability: POST /internal/v1/workspaces/{ws}/slot-checks
 * Several slot checks in one call (booking coalesces the concurrent checks of one workspace and one
 * principal: docs/booking.md, docs/security.md). Each item is a slot-check body plus, optionally, the
 * request id of the create or reschedule it is for: the credential names one request id (the first
 * item's), so availability's logs name the others from here. It vouches for nothing.
 * The answer is `{ data: [...] }`, one entry per check in order: what slot-check answers for that check
 * alone (slotCheckResponseSchema), or `{ error }` when that check's calendar busy time cannot be read
 * (the 503 `calendar_unavailable` slot-check would answer, with its Retry-After as
 * `retry_after_seconds`, since an item has no headers of its own). Any other failure fails the whole
 * request the way slot-check fails (503 `service_unavailable` + Retry-After when availability's store is
 * down, 400 for a malformed body, 401/403 for the credential).
 */
export const slotCheckItemSchema = slotCheckRequestSchema.extend({
  request_id: z.string().regex(REQUEST_ID_HEADER_RE).optional(),
});

export const slotChecksRequestSchema = z.strictObject({
  checks: z.array(slotCheckItemSchema).min(1).max(SLOT_CHECKS_MAX),
});

/** One check that could not be answered; only the calendar being unreadable is reported per check. */
export const slotCheckItemErrorSchema = z.strictObject({
  error: z.strictObject({
    code: z.literal('calendar_unavailable'),
    message: z.string(),
    retry_after_seconds: z.number().int().min(1),
  }),
});

export const slotChecksResponseSchema = z.array(z.union([slotCheckResponseSchema, slotCheckItemErrorSchema]));

/** availability: GET /internal/v1/workspaces/{ws}/hosts/{host} — what calendar-sync needs of a host. */
export const internalHostSchema = z
  .strictObject({
    id: idSchema('hst'),
    name: z.string(),
    email: z.string(),
    timezone: timezoneSchema,
    conferencing_url_template: z.string().nullable(),
  })
  .meta({ id: 'InternalHost', description: 'Internal: a host as other services need it.' });

export type BusyResponse = z.infer<typeof busyResponseSchema>;
export type SlotCheckRequest = z.infer<typeof slotCheckRequestSchema>;
export type SlotCheckResponse = z.infer<typeof slotCheckResponseSchema>;
export type SlotCheckItem = z.infer<typeof slotCheckItemSchema>;
export type SlotChecksRequest = z.infer<typeof slotChecksRequestSchema>;
export type SlotCheckItemError = z.infer<typeof slotCheckItemErrorSchema>;
export type SlotChecksResponse = z.infer<typeof slotChecksResponseSchema>;
export type InternalHost = z.infer<typeof internalHostSchema>;

/**
 * availability: GET /internal/v1/workspaces/{ws}/event-types/{evt} and
 * GET /internal/v1/workspaces/{ws}/event-types/by-slug/{slug} → the admin form of an Event Type
 * (v1 fields + `access`), for the invitation service and the hosted booking page. 404 when unknown.
 */
export { adminEventTypeSchema as internalEventTypeSchema } from './resources/admin';

/**
 * booking: POST /internal/v1/workspaces/{ws}/bookings — a Booking made through the hosted booking
 * page (source `booking_page`), optionally with the invitation whose credential was used (carried in
 * the booking.created message as data.internal.invitation_id). Same rules, answers and errors as
 * POST /v1/bookings; the caller sends an Idempotency-Key (e.g. its use-reservation id) so a retry
 * after a crash never books twice.
 */
export const internalCreateBookingSchema = createBookingBodySchema
  .extend({ source: z.literal('booking_page'), invitation_id: idSchema('biv').nullable().optional() })
  .meta({ id: 'InternalCreateBookingRequest', description: 'Internal: a booking made through the hosted booking page.' });

export type InternalCreateBooking = z.infer<typeof internalCreateBookingSchema>;

/**
 * calendar-sync: POST /internal/v1/oauth/callback (called by the gateway's public GET /oauth/callback
 * with what the provider's redirect carried). The state is consumed once; `error` is the provider's
 * refusal (access_denied); else `code` is exchanged and the connection saved. 200 with the result;
 * 422 invalid_reference with one detail saying why not (docs/calendar-sync.md, "Connecting Google /
 * Microsoft"); 404 when the host no longer exists.
 */
export const oauthCallbackBodySchema = z.strictObject({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().min(1).max(256).optional(),
});

export const oauthCallbackResultSchema = z
  .strictObject({
    provider: z.enum(['google', 'microsoft']),
    host_id: idSchema('hst'),
    host_name: z.string(),
    connection_id: idSchema('cal'),
  })
  .meta({ id: 'InternalOAuthCallbackResult', description: 'Internal: a calendar connected through the OAuth flow.' });

export type OAuthCallbackBody = z.infer<typeof oauthCallbackBodySchema>;
export type OAuthCallbackResult = z.infer<typeof oauthCallbackResultSchema>;
