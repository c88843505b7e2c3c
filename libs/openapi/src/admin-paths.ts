import { z } from 'zod';
import {
  adminEventTypeSchema,
  apiKeyCreatedSchema,
  apiKeySchema,
  calendarConnectionSchema,
  calendarOAuthStartSchema,
  createApiKeyBodySchema,
  createEventTypeBodySchema,
  createHostBodySchema,
  createWebhookEndpointBodySchema,
  createWorkspaceBodySchema,
  cursorSchema,
  dataEnvelope,
  deadLetterQueueSchema,
  deadLetterReplayResultSchema,
  hostSchema,
  limitQuerySchema,
  listDeadLettersQuerySchema,
  listEnvelope,
  listWebhookDeliveriesQuerySchema,
  patchEventTypeBodySchema,
  patchHostBodySchema,
  patchWebhookEndpointBodySchema,
  putCalendarConnectionBodySchema,
  putScheduleBodySchema,
  replayDeadLettersBodySchema,
  replayWebhookDeliveriesBodySchema,
  rotateSealedValuesBodySchema,
  scheduleSchema,
  sealedValuesReportSchema,
  startCalendarOAuthBodySchema,
  webhookDeliverySchema,
  webhookEndpointCreatedSchema,
  webhookEndpointSchema,
  webhookReplayResultSchema,
  workspaceSchema,
  type ErrorCode,
} from '@sched/contracts';
import { errorCodesByStatus } from './error-responses';
import { errorResponses, openApiPath, successResponse, type ResponseOptions, type SharedResponses } from './operation-responses';
import type { JsonSchema, SchemaComponents } from './schema-components';

interface AdminOperation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  operationId: string;
  summary: string;
  /** Success statuses; 204 has no body. */
  status: Array<200 | 201 | 202 | 204>;
  query?: z.ZodType;
  body?: z.ZodType;
  bodyOptional?: boolean;
  /** The whole success body; undefined where the owning service alone defines it. */
  response?: z.ZodType;
  /** Errors beyond the shared ones, from the owning services' docs. */
  extraErrors?: Array<[number, ErrorCode]>;
}

const data = (schema: z.ZodType) => dataEnvelope(schema);
const pageQuery = z.strictObject({ cursor: cursorSchema.optional(), limit: limitQuerySchema.optional() });
const WS = '/admin/v1/workspaces/:ws';
const INVALID_REFERENCE: [number, ErrorCode] = [422, 'invalid_reference'];

/**
 * The admin API (decisions.md §13; not part of v1) as the gateway routes it, with the bodies and
 * results of libs/contracts. Only the calendar resync answer has no shared schema yet.
 */
const ADMIN_OPERATIONS: AdminOperation[] = [
  { method: 'POST', path: '/admin/v1/workspaces', operationId: 'adminCreateWorkspace', summary: 'Create a workspace', status: [201], body: createWorkspaceBodySchema, response: data(workspaceSchema) },
  { method: 'GET', path: WS, operationId: 'adminGetWorkspace', summary: 'Read a workspace', status: [200], response: data(workspaceSchema) },
  { method: 'POST', path: `${WS}/api-keys`, operationId: 'adminCreateApiKey', summary: 'Create an API key (key shown once)', status: [201], body: createApiKeyBodySchema, response: data(apiKeyCreatedSchema) },
  { method: 'GET', path: `${WS}/api-keys`, operationId: 'adminListApiKeys', summary: 'List API keys (no secrets)', status: [200], response: data(z.array(apiKeySchema)) },
  { method: 'POST', path: `${WS}/api-keys/:key/revoke`, operationId: 'adminRevokeApiKey', summary: 'Revoke an API key', status: [200], response: data(apiKeySchema) },
  { method: 'POST', path: `${WS}/hosts`, operationId: 'adminCreateHost', summary: 'Create a host', status: [201], body: createHostBodySchema, response: data(hostSchema) },
  { method: 'GET', path: `${WS}/hosts`, operationId: 'adminListHosts', summary: 'List hosts', status: [200], query: pageQuery, response: listEnvelope(hostSchema) },
  { method: 'GET', path: `${WS}/hosts/:host`, operationId: 'adminGetHost', summary: 'Read a host', status: [200], response: data(hostSchema) },
  { method: 'PATCH', path: `${WS}/hosts/:host`, operationId: 'adminUpdateHost', summary: 'Update a host', status: [200], body: patchHostBodySchema, response: data(hostSchema) },
  { method: 'GET', path: `${WS}/hosts/:host/schedule`, operationId: 'adminGetSchedule', summary: "Read a host's schedule", status: [200], response: data(scheduleSchema) },
  { method: 'PUT', path: `${WS}/hosts/:host/schedule`, operationId: 'adminPutSchedule', summary: "Replace a host's schedule", status: [200], body: putScheduleBodySchema, response: data(scheduleSchema) },
  { method: 'GET', path: `${WS}/hosts/:host/calendar`, operationId: 'adminGetCalendar', summary: "Read a host's calendar connection", status: [200], response: data(calendarConnectionSchema) },
  { method: 'PUT', path: `${WS}/hosts/:host/calendar`, operationId: 'adminPutCalendar', summary: 'Connect a CalDAV calendar (201 new, 200 replaced)', status: [200, 201], body: putCalendarConnectionBodySchema, response: data(calendarConnectionSchema), extraErrors: [INVALID_REFERENCE] },
  { method: 'POST', path: `${WS}/hosts/:host/calendar/oauth`, operationId: 'adminStartCalendarOAuth', summary: 'Start connecting a Google or Microsoft calendar (OAuth authorization URL)', status: [201], body: startCalendarOAuthBodySchema, response: data(calendarOAuthStartSchema), extraErrors: [INVALID_REFERENCE] },
  { method: 'DELETE', path: `${WS}/hosts/:host/calendar`, operationId: 'adminDeleteCalendar', summary: 'Disconnect the calendar', status: [204] },
  { method: 'POST', path: `${WS}/event-types`, operationId: 'adminCreateEventType', summary: 'Create an Event Type', status: [201], body: createEventTypeBodySchema, response: data(adminEventTypeSchema), extraErrors: [INVALID_REFERENCE] },
  { method: 'GET', path: `${WS}/event-types`, operationId: 'adminListEventTypes', summary: 'List Event Types with their access mode', status: [200], query: pageQuery, response: listEnvelope(adminEventTypeSchema) },
  { method: 'GET', path: `${WS}/event-types/:evt`, operationId: 'adminGetEventType', summary: 'Read an Event Type with its access mode', status: [200], response: data(adminEventTypeSchema) },
  { method: 'PATCH', path: `${WS}/event-types/:evt`, operationId: 'adminUpdateEventType', summary: 'Update an Event Type', status: [200], body: patchEventTypeBodySchema, response: data(adminEventTypeSchema) },
  { method: 'POST', path: `${WS}/bookings/:bkg/calendar-resync`, operationId: 'adminResyncCalendar', summary: 'Retry the calendar sync of a Booking', status: [200] },
  { method: 'POST', path: `${WS}/webhook-endpoints`, operationId: 'adminCreateWebhookEndpoint', summary: 'Register a webhook endpoint (secret shown once)', status: [201], body: createWebhookEndpointBodySchema, response: data(webhookEndpointCreatedSchema) },
  { method: 'GET', path: `${WS}/webhook-endpoints`, operationId: 'adminListWebhookEndpoints', summary: 'List webhook endpoints', status: [200], response: data(z.array(webhookEndpointSchema)) },
  { method: 'GET', path: `${WS}/webhook-endpoints/:whe`, operationId: 'adminGetWebhookEndpoint', summary: 'Read a webhook endpoint', status: [200], response: data(webhookEndpointSchema) },
  { method: 'PATCH', path: `${WS}/webhook-endpoints/:whe`, operationId: 'adminUpdateWebhookEndpoint', summary: 'Update or disable a webhook endpoint', status: [200], body: patchWebhookEndpointBodySchema, response: data(webhookEndpointSchema) },
  { method: 'DELETE', path: `${WS}/webhook-endpoints/:whe`, operationId: 'adminDeleteWebhookEndpoint', summary: 'Delete a webhook endpoint', status: [204] },
  { method: 'POST', path: `${WS}/webhook-endpoints/:whe/rotate-secret`, operationId: 'adminRotateWebhookSecret', summary: 'Rotate the signing secret (new secret shown once)', status: [200], response: data(webhookEndpointCreatedSchema) },
  { method: 'GET', path: `${WS}/webhook-deliveries`, operationId: 'adminListWebhookDeliveries', summary: 'List webhook deliveries with their attempts', status: [200], query: listWebhookDeliveriesQuerySchema, response: listEnvelope(webhookDeliverySchema) },
  { method: 'POST', path: `${WS}/webhook-deliveries/replay`, operationId: 'adminReplayWebhookDeliveries', summary: 'Re-queue the failed deliveries of an endpoint created in [from, to)', status: [202], body: replayWebhookDeliveriesBodySchema, response: data(webhookReplayResultSchema), extraErrors: [INVALID_REFERENCE] },
  { method: 'POST', path: '/admin/v1/webhook-deliveries/:id/replay', operationId: 'adminReplayWebhookDelivery', summary: 'Re-send one delivery with the same webhook-id', status: [202], response: data(webhookReplayResultSchema), extraErrors: [INVALID_REFERENCE] },
  { method: 'GET', path: '/admin/v1/dead-letters', operationId: 'adminListDeadLetters', summary: 'Dead letters per queue: count and oldest messages', status: [200], query: listDeadLettersQuerySchema, response: data(z.array(deadLetterQueueSchema)) },
  { method: 'POST', path: '/admin/v1/dead-letters/:queue/replay', operationId: 'adminReplayDeadLetters', summary: 'Move dead letters back to their queue', status: [200], body: replayDeadLettersBodySchema, bodyOptional: true, response: data(deadLetterReplayResultSchema) },
  // {service}: calendar-sync, invitation or webhook-dispatch (the services that seal values at rest); another name is 404.
  { method: 'GET', path: '/admin/v1/secrets/:service', operationId: 'adminSealedValues', summary: "A service's sealed values counted by key id", status: [200], response: data(sealedValuesReportSchema) },
  { method: 'POST', path: '/admin/v1/secrets/:service/rotate', operationId: 'adminRotateSealedValues', summary: 'Re-seal under the current key, in bounded batches, the values still under another (call again until done)', status: [200], body: rotateSealedValuesBodySchema, bodyOptional: true, response: data(sealedValuesReportSchema) },
];

const NO_LIMITS: ResponseOptions = { rateLimited: false, idempotent: false };

function operationObject(op: AdminOperation, components: SchemaComponents, shared: SharedResponses): JsonSchema {
  const { params } = openApiPath(op.path);
  const parameters: JsonSchema[] = params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } }));
  if (op.query) {
    const query = components.resolve(components.use(op.query, 'input'));
    for (const [name, schema] of Object.entries((query.properties ?? {}) as Record<string, JsonSchema>)) {
      parameters.push({ name, in: 'query', required: false, schema });
    }
  }
  const operation: JsonSchema = {
    tags: ['Admin'],
    summary: op.summary,
    operationId: op.operationId,
    security: [{ adminToken: [] }],
    parameters,
  };
  if (op.body) {
    operation.requestBody = { required: !op.bodyOptional, content: { 'application/json': { schema: components.use(op.body, 'input') } } };
  }
  const errors = errorCodesByStatus({
    mutating: false,
    scoped: false,
    rateLimited: false,
    hasResourceId: op.path.includes(':'),
    acceptsBody: op.body !== undefined,
  });
  for (const [status, code] of op.extraErrors ?? []) errors.set(status, [...(errors.get(status) ?? []), code]);
  const body: JsonSchema = op.response ? components.use(op.response, 'output') : { type: 'object', description: 'Envelope `{data, meta}` as the owning service defines it.' };
  const successes = Object.fromEntries(op.status.map((s) => [String(s), successResponse(s, op.summary, s === 204 ? null : body, NO_LIMITS)]));
  operation.responses = { ...successes, ...errorResponses(new Map([...errors].sort(([a], [b]) => a - b)), NO_LIMITS, shared) };
  return operation;
}

export function adminPaths(components: SchemaComponents, shared: SharedResponses): Record<string, Record<string, JsonSchema>> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of ADMIN_OPERATIONS) {
    const { path } = openApiPath(op.path);
    paths[path] = { ...paths[path], [op.method.toLowerCase()]: operationObject(op, components, shared) };
  }
  return paths;
}
