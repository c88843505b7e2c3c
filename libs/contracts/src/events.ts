import { z } from 'zod';
import { type PublicEventKind, type EventKind, EVENT_KINDS } from './event-kinds';
import { idSchema, newId } from './ids';
import { bookingSchema } from './resources/booking';
import { calendarErrorCodeSchema } from './resources/values';
import { timestampSchema, toTimestamp } from './time';

/**
 * Messages on the `scheduling.events` exchange (architecture.md) and the webhook body built from
 * them (decisions.md §11). Every message, public or internal, has a `wev_` id; for public kinds the
 * same id is the `webhook-id` receivers deduplicate on.
 */
export const EVENT_SCHEMA_VERSION = 1;

/**
 * What services need of a booking change beyond the public Booking: the blocked range the booking
 * service enforced (buffers included), and the invitation whose credential made it. Never sent to a
 * webhook receiver (toWebhookBody drops it).
 */
export const bookingInternalSchema = z
  .strictObject({
    blocked_from: timestampSchema,
    blocked_to: timestampSchema,
    invitation_id: idSchema('biv').nullable(),
  })
  .meta({ id: 'BookingEventInternal', description: 'Internal: blocked range and invitation of a booking change.' });

/** booking.* data: the Booking as the API returns it after the change (+ internal fields on the bus only). */
export const bookingEventDataSchema = z
  .strictObject({ booking: bookingSchema, internal: bookingInternalSchema.optional() })
  .meta({ id: 'BookingEventData', description: 'The Booking as the API returns it after the change.' });

/** The webhook form of booking.* data: the Booking only. */
export const bookingWebhookDataSchema = z
  .strictObject({ booking: bookingSchema })
  .meta({ id: 'BookingWebhookData', description: 'The Booking as the API returns it after the change.' });

/** calendar.created data: the Booking after its calendar event was first written. */
export const calendarCreatedDataSchema = z
  .strictObject({ booking: bookingSchema })
  .meta({ id: 'CalendarCreatedData', description: 'The Booking after its calendar event was written.' });

/** calendar.failed data: the Booking (calendar.status failed) and why. */
export const calendarFailedDataSchema = z
  .strictObject({ booking: bookingSchema, error_code: calendarErrorCodeSchema })
  .meta({ id: 'CalendarFailedData', description: 'The Booking whose calendar event could not be written, and why.' });

/** Internal: the provider now matches this Booking version (written, updated or deleted). */
export const calendarSyncedDataSchema = z
  .strictObject({
    booking_id: idSchema('bkg'),
    booking_version: z.number().int().min(1),
    status: z.literal('synced'),
    join_url: z.string().nullable(),
    event_uid: z.string().min(1),
  })
  .meta({ id: 'CalendarSyncedData', description: 'Internal: calendar event matches the Booking version.' });

/** Internal: writing the calendar event for this Booking version failed after its retries. */
export const calendarSyncFailedDataSchema = z
  .strictObject({
    booking_id: idSchema('bkg'),
    booking_version: z.number().int().min(1),
    error_code: calendarErrorCodeSchema,
  })
  .meta({ id: 'CalendarSyncFailedData', description: 'Internal: calendar write failed after its retries.' });

/** Internal: a host's calendar connection was saved, failed, recovered or removed (availability's `bookable`). */
export const calendarConnectionUpdatedDataSchema = z
  .strictObject({
    host_id: idSchema('hst'),
    status: z.enum(['connected', 'error', 'disconnected']),
    error_code: calendarErrorCodeSchema.nullable(),
  })
  .meta({ id: 'CalendarConnectionUpdatedData', description: 'Internal: state of a host calendar connection.' });

export const EVENT_DATA_SCHEMAS = {
  'booking.created': bookingEventDataSchema,
  'booking.rescheduled': bookingEventDataSchema,
  'booking.cancelled': bookingEventDataSchema,
  'calendar.created': calendarCreatedDataSchema,
  'calendar.failed': calendarFailedDataSchema,
  'calendar.synced': calendarSyncedDataSchema,
  'calendar.sync_failed': calendarSyncFailedDataSchema,
  'calendar.connection_updated': calendarConnectionUpdatedDataSchema,
} as const satisfies Record<EventKind, z.ZodType>;

export type EventData<K extends EventKind> = z.infer<(typeof EVENT_DATA_SCHEMAS)[K]>;

function pascal(kind: string): string {
  return kind
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function messageSchemaFor<K extends EventKind>(kind: K) {
  return z
    .strictObject({
      id: idSchema('wev'),
      type: z.literal(kind),
      occurred_at: timestampSchema,
      workspace_id: idSchema('wsp'),
      schema_version: z.literal(EVENT_SCHEMA_VERSION),
      data: EVENT_DATA_SCHEMAS[kind] as (typeof EVENT_DATA_SCHEMAS)[K],
    })
    .meta({ id: `${pascal(kind)}Message`, description: `Message ${kind} on the event bus.` });
}

/**
 * Any message before its kind is known: for a consumer or relay that routes on `type` and must
 * tolerate kinds it does not handle. Validate `data` with the schema of the kind afterwards.
 */
export const eventEnvelopeSchema = z
  .strictObject({
    id: idSchema('wev'),
    type: z.string().min(1),
    occurred_at: timestampSchema,
    workspace_id: idSchema('wsp'),
    schema_version: z.literal(EVENT_SCHEMA_VERSION),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EventEnvelope', description: 'Any message on the event bus, data not yet checked.' });

export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

export const EVENT_MESSAGE_SCHEMAS = {
  'booking.created': messageSchemaFor('booking.created'),
  'booking.rescheduled': messageSchemaFor('booking.rescheduled'),
  'booking.cancelled': messageSchemaFor('booking.cancelled'),
  'calendar.created': messageSchemaFor('calendar.created'),
  'calendar.failed': messageSchemaFor('calendar.failed'),
  'calendar.synced': messageSchemaFor('calendar.synced'),
  'calendar.sync_failed': messageSchemaFor('calendar.sync_failed'),
  'calendar.connection_updated': messageSchemaFor('calendar.connection_updated'),
} as const;

/** Any message; discriminated on `type`. */
export const eventMessageSchema = z
  .discriminatedUnion(
    'type',
    EVENT_KINDS.map((k) => EVENT_MESSAGE_SCHEMAS[k]) as unknown as [
      (typeof EVENT_MESSAGE_SCHEMAS)[EventKind],
      ...(typeof EVENT_MESSAGE_SCHEMAS)[EventKind][],
    ],
  )
  .meta({ id: 'EventMessage', description: 'A message on the scheduling.events exchange.' });

export type EventMessage<K extends EventKind = EventKind> = {
  [P in K]: z.infer<(typeof EVENT_MESSAGE_SCHEMAS)[P]>;
}[K];

/** Makes a message with a fresh `wev_` id. */
export function makeEvent<K extends EventKind>(
  type: K,
  input: { workspaceId: string; data: EventData<K>; occurredAt?: Date; id?: string },
): EventMessage<K> {
  return {
    id: input.id ?? newId('wev'),
    type,
    occurred_at: toTimestamp(input.occurredAt ?? new Date()),
    workspace_id: input.workspaceId,
    schema_version: EVENT_SCHEMA_VERSION,
    data: input.data,
  } as EventMessage<K>;
}

const WEBHOOK_DATA_SCHEMAS = {
  'booking.created': bookingWebhookDataSchema,
  'booking.rescheduled': bookingWebhookDataSchema,
  'booking.cancelled': bookingWebhookDataSchema,
  'calendar.created': calendarCreatedDataSchema,
  'calendar.failed': calendarFailedDataSchema,
} as const satisfies Record<PublicEventKind, z.ZodType>;

function webhookSchemaFor<K extends PublicEventKind>(kind: K) {
  return z
    .strictObject({
      id: idSchema('wev'),
      type: z.literal(kind),
      created_at: timestampSchema,
      workspace_id: idSchema('wsp'),
      data: WEBHOOK_DATA_SCHEMAS[kind] as (typeof WEBHOOK_DATA_SCHEMAS)[K],
    })
    .meta({ id: `${pascal(kind)}Webhook`, description: `Webhook body of ${kind}.` });
}

export const WEBHOOK_BODY_SCHEMAS = {
  'booking.created': webhookSchemaFor('booking.created'),
  'booking.rescheduled': webhookSchemaFor('booking.rescheduled'),
  'booking.cancelled': webhookSchemaFor('booking.cancelled'),
  'calendar.created': webhookSchemaFor('calendar.created'),
  'calendar.failed': webhookSchemaFor('calendar.failed'),
} as const;

/** Body of a webhook delivery: `{id, type, created_at, workspace_id, data}`. */
export const webhookBodySchema = z
  .discriminatedUnion('type', [
    WEBHOOK_BODY_SCHEMAS['booking.created'],
    WEBHOOK_BODY_SCHEMAS['booking.rescheduled'],
    WEBHOOK_BODY_SCHEMAS['booking.cancelled'],
    WEBHOOK_BODY_SCHEMAS['calendar.created'],
    WEBHOOK_BODY_SCHEMAS['calendar.failed'],
  ])
  .meta({ id: 'WebhookEvent', description: 'Body of a signed webhook delivery; `id` equals the webhook-id header.' });

export type WebhookBody<K extends PublicEventKind = PublicEventKind> = {
  [P in K]: z.infer<(typeof WEBHOOK_BODY_SCHEMAS)[P]>;
}[K];

/** The webhook body of a public message: same id, created_at = occurred_at, internal fields dropped. */
export function toWebhookBody<K extends PublicEventKind>(message: EventMessage<K>): WebhookBody<K> {
  const { internal: _internal, ...data } = message.data as Record<string, unknown>;
  return {
    id: message.id,
    type: message.type,
    created_at: message.occurred_at,
    workspace_id: message.workspace_id,
    data,
  } as WebhookBody<K>;
}
