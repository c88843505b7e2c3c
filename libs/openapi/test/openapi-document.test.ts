import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { bookingSchema, ERROR_STATUS, PUBLIC_EVENT_KINDS, V1_OPERATIONS } from '@sched/contracts';
import { buildOpenApiDocument, serializeOpenApiDocument } from '../src';

const doc = buildOpenApiDocument() as any;
const VALIDATOR_SCRIPT = path.join(__dirname, 'support', 'validate-openapi.mjs');
const toTemplate = (p: string) => p.replace(/:(\w+)/g, '{$1}');

/** Runs the standard validator on a document in a child process (the validator is ESM only). */
function validateWithStandardValidator(document: object): { valid: boolean; errors: unknown } {
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const run = spawnSync(process.execPath, [VALIDATOR_SCRIPT, file], { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`validator did not run: ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split('\n').pop()!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function resolveResponse(response: any): any {
  return response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response;
}

function errorCodes(response: any): string[] {
  return resolveResponse(response).content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
}

describe('the OpenAPI document', () => {
  it('passes the OpenAPI 3.1 schema validator (@seriousme/openapi-schema-validator) as OpenAPI 3.1.0, contract version 1.0.0', () => {
    const result = validateWithStandardValidator(doc);
    expect(result).toEqual({ valid: true, errors: null, version: '3.1' });
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('the validator run above can fail: a document with a dangling $ref and a bad response is refused', () => {
    const broken = structuredClone(doc);
    broken.paths['/v1/bookings'].post.responses['201'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    expect(validateWithStandardValidator(broken).valid).toBe(false);
    const broken2 = structuredClone(doc);
    broken2.paths['/v1/bookings'].get.responses = 'none';
    expect(validateWithStandardValidator(broken2).valid).toBe(false);
  });

  it('every component schema is a valid JSON Schema 2020-12 document (Ajv meta-validation)', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const [id, schema] of Object.entries(doc.components.schemas)) {
      expect([id, ajv.validateSchema(schema as object), ajv.errors ?? null]).toEqual([id, true, null]);
    }
  });

  it('is generated deterministically, and docs/openapi.json is the current output (else run `pnpm openapi`)', () => {
    const text = serializeOpenApiDocument();
    expect(serializeOpenApiDocument(buildOpenApiDocument())).toBe(text);
    const committed = readFileSync(path.resolve(__dirname, '../../../docs/openapi.json'), 'utf8');
    expect(committed === text ? 'current' : 'stale: run `pnpm openapi` and commit docs/openapi.json').toBe('current');
  });

  it('has each v1 operation of the contracts table, and no other, with its scope, success status and the contracts schema of its answer', () => {
    for (const op of V1_OPERATIONS) {
      const operation = doc.paths[toTemplate(op.path)][op.method.toLowerCase()];
      expect(operation.operationId).toBe(op.operationId);
      expect(operation.security).toEqual([{ bearer: [op.scope] }]);
      expect(operation['x-scopes']).toEqual([op.scope]);
      expect(operation.description).toContain(op.scope);
      const success = operation.responses[String(op.status)];
      const id = (op.response.meta() as { id: string }).id;
      expect(success.content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${id}` });
      expect(doc.components.schemas[id]).toBeDefined();
    }
    const v1Operations = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/v1/') && p !== '/v1/openapi.json')
      .flatMap(([, item]) => Object.keys(item as object));
    expect(v1Operations).toHaveLength(V1_OPERATIONS.length);
    // The document itself is served without authentication.
    expect(doc.paths['/v1/openapi.json'].get.security).toEqual([]);
  });

  it('takes the Booking component from the zod schema: same fields, all required, no others allowed', () => {
    const booking = doc.components.schemas.Booking;
    expect(Object.keys(booking.properties)).toEqual(Object.keys(bookingSchema.shape));
    expect(booking.required).toEqual(Object.keys(bookingSchema.shape));
    expect(booking.additionalProperties).toBe(false);
  });

  it('describes requests in their wire form (io input) and answers in theirs (io output)', () => {
    const create = doc.components.schemas.CreateBookingRequest;
    expect(create.properties.start_at.$ref).toBe('#/components/schemas/TimestampInput');
    expect(doc.components.schemas.TimestampInput).toMatchObject({ type: 'string', format: 'date-time' });
    expect(doc.components.schemas.Booking.properties.start_at.$ref).toBe('#/components/schemas/Timestamp');
    expect(doc.components.schemas.LimitQuery).toMatchObject({ type: 'string', pattern: '^(?:0|[1-9][0-9]*)$' });
  });

  it('documents path and query parameters, with the cross-field rules in the description', () => {
    const list = doc.paths['/v1/bookings'].get;
    const names = list.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name);
    expect(names).toEqual(['status', 'starts_from', 'starts_to', 'event_type_id', 'cursor', 'limit']);
    expect(list.description).toMatch(/90 days/);
    const slots = doc.paths['/v1/event-types/{eventType}/slots'].get;
    expect(slots.parameters.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p.required])).toEqual([
      ['from', true],
      ['to', true],
      ['timezone', true],
    ]);
    expect(slots.parameters.find((p: any) => p.in === 'path')).toMatchObject({ name: 'eventType', required: true });
  });

  it('documents the optional JSON body of GET /v1/event-types and its cursor/limit query alternative', () => {
    const op = doc.paths['/v1/event-types'].get;
    expect(op.requestBody).toMatchObject({ required: false, content: { 'application/json': { schema: { $ref: '#/components/schemas/ListEventTypesBody' } } } });
    expect(op.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name)).toEqual(['cursor', 'limit']);
  });

  it('takes an optional Idempotency-Key on every POST and on no GET; replayed answers may carry Idempotent-Replayed', () => {
    for (const [p, item] of Object.entries<any>(doc.paths).filter(([p]) => p.startsWith('/v1/') && p !== '/v1/openapi.json')) {
      for (const [method, op] of Object.entries<any>(item)) {
        const takesKey = op.parameters.some((x: any) => x.$ref === '#/components/parameters/IdempotencyKey');
        expect([p, method, takesKey]).toEqual([p, method, method === 'post']);
      }
    }
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(doc.paths['/v1/bookings'].post.responses['201'].headers['Idempotent-Replayed']).toBeDefined();
    expect(doc.paths['/v1/bookings'].get.responses['200'].headers['Idempotent-Replayed']).toBeUndefined();
  });

  it('lists per status the error codes of decisions.md §2 that each operation can return', () => {
    const create = doc.paths['/v1/bookings'].post.responses;
    expect(errorCodes(create['409'])).toEqual(['slot_unavailable', 'event_type_not_bookable', 'idempotency_request_in_progress']);
    expect(errorCodes(create['422'])).toEqual(['idempotency_key_reused', 'invalid_reference']);
    expect(errorCodes(create['503'])).toEqual(['calendar_unavailable', 'service_unavailable']);
    expect(Object.keys(create)).toEqual(['201', '400', '401', '403', '409', '413', '415', '422', '429', '500', '502', '503', '504']);
    const get = doc.paths['/v1/bookings/{booking}'].get.responses;
    expect(Object.keys(get)).toEqual(['200', '400', '401', '403', '404', '429', '500', '502', '503', '504']);
    // A store the request needs being down (decisions.md §2) can answer any operation, v1 and admin.
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) if (op.operationId !== 'getOpenApiDocument') expect([op.operationId, errorCodes(resolveResponse(op.responses['503']))]).toEqual([op.operationId, expect.arrayContaining(['service_unavailable'])]);
    }
    expect(errorCodes(doc.paths['/v1/bookings/{booking}/cancel'].post.responses['409'])).toEqual(['version_conflict', 'booking_cancelled', 'idempotency_request_in_progress']);
    expect(errorCodes(doc.paths['/v1/booking-invitations/{bookingInvitation}/reissue'].post.responses['409'])).toContain('invitation_not_active');
    // Every code sits under its own status.
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (Number(status) < 400 || p === '/v1/openapi.json') continue;
          for (const code of errorCodes(response)) {
            // upstream_unavailable: 502, and 504 on a timeout.
            const expected = code === 'upstream_unavailable' ? [502, 504] : [ERROR_STATUS[code as keyof typeof ERROR_STATUS]];
            expect([p, code, expected.includes(Number(status))]).toEqual([p, code, true]);
          }
        }
      }
    }
  });

  it('documents the response headers: X-Request-Id always, RateLimit-* on v1, Retry-After on 429 and 503, WWW-Authenticate on 401', () => {
    const responses = doc.paths['/v1/event-types/{eventType}/slots'].get.responses;
    expect(Object.keys(responses['200'].headers)).toEqual(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(resolveResponse(responses['429']).headers['Retry-After']).toMatchObject({ required: true });
    expect(resolveResponse(responses['503']).headers['Retry-After']).toMatchObject({ required: true });
    expect(resolveResponse(responses['401']).headers['WWW-Authenticate']).toBeDefined();
    expect(doc.components.headers['X-Request-Id'].required).toBe(true);
  });

  it('declares the bearer scheme and lists every scope with its operations', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.bearer.description).toContain('`bookings:write`: createBooking, cancelBooking, rescheduleBooking');
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('describes the five public webhook kinds with their Standard Webhooks headers and bodies', () => {
    expect(Object.keys(doc.webhooks)).toEqual([...PUBLIC_EVENT_KINDS]);
    const created = doc.webhooks['booking.created'].post;
    expect(created.parameters.map((p: any) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(created.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/BookingCreatedWebhook' });
    expect(doc.components.schemas.CalendarFailedWebhook.properties.data.$ref).toBe('#/components/schemas/CalendarFailedData');
  });

  it('documents the admin API under its own tag and token, apart from v1', () => {
    const create = doc.paths['/admin/v1/workspaces'].post;
    expect(create.tags).toEqual(['Admin']);
    expect(create.security).toEqual([{ adminToken: [] }]);
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AdminCreateWorkspaceRequest' });
    expect(doc.paths['/admin/v1/dead-letters/{queue}/replay'].post).toBeDefined();
    expect(Object.keys(doc.paths['/admin/v1/workspaces/{ws}/hosts/{host}/calendar'])).toEqual(['get', 'put', 'delete']);
    expect(Object.keys(doc.paths['/admin/v1/workspaces/{ws}/hosts/{host}/calendar'].put.responses).slice(0, 2)).toEqual(['200', '201']);
    expect(doc.paths['/admin/v1/workspaces/{ws}/webhook-endpoints/{whe}'].delete.responses['204'].content).toBeUndefined();
    expect(doc.paths['/admin/v1/workspaces/{ws}/webhook-deliveries'].get.responses['200'].content['application/json'].schema.properties.data.items).toEqual({
      $ref: '#/components/schemas/AdminWebhookDelivery',
    });
  });
});
