import { errorEnvelopeSchema, idempotencyKeySchema, SCOPES, V1_OPERATIONS } from '@sched/contracts';
import { adminPaths } from './admin-paths';
import { requestHeaderParameters, RESPONSE_HEADERS } from './headers';
import { errorResponse, SharedResponses } from './operation-responses';
import { SchemaComponents, type JsonSchema } from './schema-components';
import { v1Paths } from './v1-paths';
import { webhookItems } from './webhooks';

/** api-v1.md Versioning rule 1: the machine-readable contract has version 1.0.0. */
export const CONTRACT_VERSION = '1.0.0';
/** Where the gateway serves the document (no authentication). */
export const OPENAPI_DOCUMENT_PATH = '/v1/openapi.json';

const DESCRIPTION = `Scheduling service public API, version 1 (api-v1.md, with the choices of decisions.md).

Every request carries \`Authorization: Bearer <API_KEY>\`. A key must never appear in browser code: a browser
must not call the API with a key; a custom booking UI submits through the caller's own backend.
Every answer carries \`X-Request-Id\` (equal to \`meta.request_id\`) and \`RateLimit-Limit\`, \`RateLimit-Remaining\`,
\`RateLimit-Reset\` (100 requests per 10 s per key by default). Errors share one envelope
\`{error: {code, message, details: [{field, issue}]}, meta: {request_id}}\`; checks run in the order
401 → 404/405 → 403 → 413/415 → 400 → 404 → 409/422, the first failing wins. A method not defined on a
known path answers \`405 method_not_allowed\` with \`Allow\`; an unknown path \`404 not_found\`.
Unknown body fields and unknown query parameters are \`400 invalid_request\`.
A JSON body must be UTF-8 (another charset: \`415\`; bytes that are not UTF-8: \`400\` with \`{field: "body", issue: "invalid_format"}\`)
and nest arrays and objects at most 64 levels deep (\`400\`, \`{field: "body", issue: "too_deep"}\`). Request headers over 16 KiB
answer \`431\` with the same envelope (\`invalid_request\`, \`{field: "headers", issue: "too_long"}\`).
Timestamps out are RFC 3339 UTC with milliseconds; timestamps in are RFC 3339 with \`Z\` or \`+00:00\`.`;

function scopeTable(): string {
  return SCOPES.map((scope) => {
    const ops = V1_OPERATIONS.filter((o) => o.scope === scope).map((o) => o.operationId);
    return `- \`${scope}\`: ${ops.join(', ')}`;
  }).join('\n');
}

/** The gateway serves this document itself, without authentication. */
function documentPath(): Record<string, JsonSchema> {
  return {
    [OPENAPI_DOCUMENT_PATH]: {
      get: {
        tags: ['Contract'],
        summary: 'This OpenAPI document',
        description: 'The machine-readable contract, version 1.0.0. No authentication.',
        operationId: 'getOpenApiDocument',
        security: [],
        responses: {
          '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } },
          // Every route refuses text no service can handle (NUL, lone surrogates, escapes that are not UTF-8).
          '400': errorResponse(400, ['invalid_request'], { rateLimited: false, idempotent: false }),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of v1 (and, under the Admin tag, of the admin API), generated from the
 * zod schemas of libs/contracts. Building it twice gives the same JSON, key order included.
 */
export function buildOpenApiDocument(): JsonSchema {
  const components = new SchemaComponents();
  // Every error response refers to this component by name (error-responses.ts).
  components.use(errorEnvelopeSchema, 'output');
  const shared = new SharedResponses();
  const paths = { ...v1Paths(components, shared), ...documentPath(), ...adminPaths(components, shared) };
  const webhooks = webhookItems(components);
  const parameters = requestHeaderParameters(components.use(idempotencyKeySchema, 'input'));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Scheduling Service API',
      version: CONTRACT_VERSION,
      description: DESCRIPTION,
    },
    servers: [{ url: '{base_url}', description: 'The gateway.', variables: { base_url: { default: 'http://127.0.0.1:8080' } } }],
    tags: [
      { name: 'Event Types', description: 'Read Event Types.' },
      { name: 'Slots', description: 'Bookable times of an Event Type; not held.' },
      { name: 'Bookings', description: 'Create, read, list, reschedule and cancel Bookings.' },
      { name: 'Booking Invitations', description: 'Access to invitation-only Event Types through the hosted booking page.' },
      { name: 'Webhooks', description: 'Signed deliveries the service sends to registered endpoints (Standard Webhooks).' },
      { name: 'Contract', description: 'The machine-readable contract itself.' },
      { name: 'Admin', description: 'Workspace administration (decisions.md §13); not part of v1. Authorization: Bearer <ADMIN_TOKEN>.' },
    ],
    security: [{ bearer: [] }],
    paths,
    webhooks,
    components: {
      schemas: components.toObject(),
      responses: shared.toObject(),
      parameters,
      headers: RESPONSE_HEADERS,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'sk_live_… / sk_test_… API key',
          description: `API key of one workspace, with fixed least-privilege scopes. Each operation lists the scope it needs in its security requirement and in x-scopes; a key without it gets 403 insufficient_scope.\n\n${scopeTable()}`,
        },
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'Operator secret ADMIN_TOKEN from the environment; admin API only.',
        },
      },
    },
  };
}

/** The document as committed in docs/openapi.json: two-space indentation and a final newline. */
export function serializeOpenApiDocument(doc: JsonSchema = buildOpenApiDocument()): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
