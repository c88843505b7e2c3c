import { V1_OPERATIONS, type V1Operation } from '@sched/contracts';
import { errorCodesByStatus, type OperationTraits } from './error-responses';
import { errorResponses, openApiPath, successResponse, type ResponseOptions, type SharedResponses } from './operation-responses';
import type { JsonSchema, SchemaComponents } from './schema-components';

type Docs = Pick<OperationTraits, 'conflicts' | 'unprocessable' | 'failsClosed'> & { summary: string; description?: string; success: string };

/** Words of api-v1.md "Endpoints" and the operation-specific errors of decisions.md §2. */
const DOCS: Record<string, Docs> = {
  listBookingInvitations: {
    summary: 'List Booking Invitations',
    description: 'Newest first (created_at, then id, descending). `status` filters on the effective status at query time.',
    success: 'A page of Booking Invitations (never with invitation_url); meta.next_cursor is null on the last page.',
  },
  createBookingInvitation: {
    summary: 'Create a Booking Invitation',
    description: 'For an invitation-only Event Type. `expires_at` must lie in the future and after `not_before`. The answer carries `invitation_url` with a one-time credential, returned only here and by reissue.',
    success: 'The new Booking Invitation including invitation_url.',
    unprocessable: ['invalid_reference'],
  },
  getBookingInvitation: { summary: 'Read a Booking Invitation', success: 'The Booking Invitation.' },
  revokeBookingInvitation: {
    summary: 'Revoke a Booking Invitation',
    description: 'From any status but `revoked`; sets `revoked_at`. No body.',
    success: 'The revoked Booking Invitation.',
    conflicts: ['invitation_not_active'],
  },
  reissueBookingInvitation: {
    summary: 'Reissue a Booking Invitation',
    description: 'A new one-time credential; the old one stops working at once; `used_count` is kept. Allowed from `not_yet_valid` and `active`. No body.',
    success: 'The Booking Invitation including its new invitation_url.',
    conflicts: ['invitation_not_active'],
  },
  listBookings: {
    summary: 'List Bookings',
    description:
      'Ascending by start_at, then id. `starts_from` and `starts_to` go together; `starts_to` is after `starts_from` and at most 90 days later.',
    success: 'A page of Bookings; meta.next_cursor is null on the last page.',
  },
  createBooking: {
    summary: 'Create a Booking',
    description:
      '`start_at` must be exactly a start the Slots query would return now, else 409 slot_unavailable. The Booking is `confirmed` at once while `calendar.status` is still `pending`. Send an Idempotency-Key so that a retry never books twice.',
    success: 'The confirmed Booking (version 1, calendar.status pending, meeting.join_url null).',
    conflicts: ['slot_unavailable', 'event_type_not_bookable'],
    unprocessable: ['invalid_reference'],
    failsClosed: true,
  },
  getBooking: { summary: 'Read a Booking', success: 'The Booking.' },
  cancelBooking: {
    summary: 'Cancel a Booking',
    description: 'Optional body with `expected_version`. Sets `cancelled_at` and increments `version`; the calendar event is deleted afterwards.',
    success: 'The cancelled Booking.',
    conflicts: ['version_conflict', 'booking_cancelled'],
  },
  rescheduleBooking: {
    summary: 'Reschedule a Booking',
    description: 'Moves the Booking to a new Slot start; `expected_version` must match. Sets `rescheduled_at` and increments `version`.',
    success: 'The rescheduled Booking.',
    conflicts: ['slot_unavailable', 'version_conflict', 'booking_cancelled', 'event_type_not_bookable'],
    failsClosed: true,
  },
  listEventTypes: {
    summary: 'List Event Types',
    description:
      'Ascending by created_at, then id. `cursor` and `limit` come from an optional JSON body (api-v1.md) or, for clients that cannot send a body with GET, from the query (decisions.md §5); a parameter given in both places with different values is 400.',
    success: 'A page of Event Types; meta.next_cursor is null on the last page.',
  },
  getEventType: { summary: 'Read an Event Type', success: 'The Event Type.' },
  listSlots: {
    summary: 'List available Slots',
    description:
      'Local dates `from`..`to` in `timezone`, inclusive, at most 62 dates. A Slot is not held: it can be taken before a create call confirms. Fails closed with 503 when the calendar cannot be read and no snapshot of the last 5 minutes exists.',
    success: 'Available Slots in ascending start_at; meta has request_id only.',
    conflicts: ['event_type_not_bookable'],
    failsClosed: true,
  },
};

const PATH_PARAMS: Record<string, string> = {
  bookingInvitation: 'Booking Invitation id (`biv_…`).',
  booking: 'Booking id (`bkg_…`).',
  eventType: 'Event Type id (`evt_…`).',
};

export function v1Tag(path: string): string {
  if (path.endsWith('/slots')) return 'Slots';
  if (path.startsWith('/v1/booking-invitations')) return 'Booking Invitations';
  if (path.startsWith('/v1/bookings')) return 'Bookings';
  return 'Event Types';
}

/** One query parameter per property of the operation's query schema. */
function queryParameters(op: V1Operation, components: SchemaComponents): JsonSchema[] {
  if (!op.query) return [];
  const query = components.resolve(components.use(op.query, 'input'));
  const required = new Set((query.required as string[] | undefined) ?? []);
  return Object.entries((query.properties ?? {}) as Record<string, JsonSchema>).map(([name, prop]) => {
    const { description, ...schema } = prop;
    const resolved = components.resolve(schema);
    const param: JsonSchema = { name, in: 'query', required: required.has(name) };
    const text = description ?? resolved.description;
    if (typeof text === 'string') param.description = text;
    param.schema = schema;
    return param;
  });
}

function operationObject(op: V1Operation, components: SchemaComponents, shared: SharedResponses): JsonSchema {
  const docs = DOCS[op.operationId];
  if (!docs) throw new Error(`openapi: no documentation for ${op.operationId}`);
  const { params } = openApiPath(op.path);
  const mutating = op.method === 'POST';
  const o: ResponseOptions = { rateLimited: true, idempotent: op.idempotent };

  const parameters: JsonSchema[] = [
    ...params.map((name) => ({ name, in: 'path', required: true, description: PATH_PARAMS[name] ?? name, schema: { type: 'string', minLength: 1 } })),
    ...queryParameters(op, components),
    ...(op.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
    { $ref: '#/components/parameters/RequestId' },
  ];

  const operation: JsonSchema = {
    tags: [v1Tag(op.path)],
    summary: docs.summary,
    description: `${docs.description ? `${docs.description}\n\n` : ''}Scope: \`${op.scope}\`.`,
    operationId: op.operationId,
    security: [{ bearer: [op.scope] }],
    'x-scopes': [op.scope],
    parameters,
  };
  if (op.body) {
    const required = op.bodyRequired ?? true;
    operation.requestBody = {
      required,
      description: required ? 'JSON body.' : 'Optional JSON body; no body is the same as `{}`.',
      content: { 'application/json': { schema: components.use(op.body, 'input') } },
    };
  }
  const errors = errorCodesByStatus({
    mutating: op.idempotent,
    hasResourceId: params.length > 0,
    acceptsBody: mutating || op.body !== undefined,
    conflicts: docs.conflicts,
    unprocessable: docs.unprocessable,
    failsClosed: docs.failsClosed,
  });
  operation.responses = {
    [String(op.status)]: successResponse(op.status, docs.success, components.use(op.response, 'output'), o),
    ...errorResponses(errors, o, shared),
  };
  return operation;
}

/** The `paths` of every v1 endpoint, in the order of V1_OPERATIONS (api-v1.md's table). */
export function v1Paths(components: SchemaComponents, shared: SharedResponses): Record<string, Record<string, JsonSchema>> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of V1_OPERATIONS) {
    const { path } = openApiPath(op.path);
    paths[path] = { ...paths[path], [op.method.toLowerCase()]: operationObject(op, components, shared) };
  }
  return paths;
}
