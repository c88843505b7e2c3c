import { z } from 'zod';
import { SCOPES, V1_OPERATIONS, V1_OWNERS, webhookBodySchema } from '../src';

/** Requests are parsed (they may turn strings into Dates); everything else is sent as is. */
function isRequest(id: string): boolean {
  return /Request$|Query$|Body$|^TimestampInput$|^LimitQuery$/.test(id);
}

describe('conversion to JSON Schema (for the OpenAPI document)', () => {
  const entries = [...z.globalRegistry._idmap.entries()];

  it('registers the resources, requests and events under ids', () => {
    const ids = entries.map(([id]) => id);
    expect(ids).toEqual(
      expect.arrayContaining(['Booking', 'EventType', 'Slot', 'BookingInvitation', 'CreateBookingRequest', 'ListBookingsQuery', 'WebhookEvent', 'ErrorResponse']),
    );
  });

  it.each(entries.map(([id, schema]) => [id, schema] as const))('%s converts', (id, schema) => {
    const io = isRequest(id) ? 'input' : 'output';
    expect(() => z.toJSONSchema(schema, { io })).not.toThrow();
    if (!isRequest(id)) expect(() => z.toJSONSchema(schema, { io: 'input' })).not.toThrow();
  });

  it('describes requests as their wire form', () => {
    const json = z.toJSONSchema(z.object({ ts: z.globalRegistry._idmap.get('TimestampInput') as z.ZodType }), { io: 'input' }) as {
      $defs: Record<string, { type?: string; format?: string }>;
    };
    expect(json.$defs.TimestampInput).toMatchObject({ type: 'string', format: 'date-time' });
  });

  it('the whole registry converts at once with unique ids', () => {
    expect(() => z.toJSONSchema(z.globalRegistry, { io: 'input' })).not.toThrow();
    expect(() => z.toJSONSchema(webhookBodySchema, { io: 'output' })).not.toThrow();
  });
});

describe('v1 operations table', () => {
  it('lists the 13 endpoints of api-v1.md, each with a known scope, and uses every scope', () => {
    expect(V1_OPERATIONS).toHaveLength(13);
    expect(new Set(V1_OPERATIONS.map((o) => `${o.method} ${o.path}`)).size).toBe(13);
    expect(new Set(V1_OPERATIONS.map((o) => o.scope))).toEqual(new Set(SCOPES));
    expect(V1_OPERATIONS.filter((o) => o.status === 201).map((o) => o.operationId).sort()).toEqual(['createBooking', 'createBookingInvitation']);
  });

  it('names an owner for every operation, every owner owns one, ids are unique, and every POST is idempotent', () => {
    expect(new Set(V1_OPERATIONS.map((o) => o.owner))).toEqual(new Set(V1_OWNERS));
    expect(new Set(V1_OPERATIONS.map((o) => o.operationId)).size).toBe(V1_OPERATIONS.length);
    for (const op of V1_OPERATIONS) expect([op.operationId, op.idempotent]).toEqual([op.operationId, op.method === 'POST']);
  });
});
