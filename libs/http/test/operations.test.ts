import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { v1OperationsOf, V1_OPERATIONS, V1_OWNERS } from '@sched/contracts';
import { checkOperationHandlers, operationAccess, registerOperations, sendData, type OperationHandlers } from '../src';
import { testApp } from './test-app';

/**
 * registerOperations mounts a service's v1 operations from libs/contracts V1_OPERATIONS: the table's
 * method and path, its zod schemas for query and body, and exactly one handler per operation owned.
 */

const seen: Array<{ id: string; params: unknown; query: unknown; body: unknown }> = [];
const echo =
  (id: string) =>
  (input: { params: unknown; query: unknown; body: unknown }, _req: unknown, res: Parameters<typeof sendData>[0]) => {
    seen.push({ id, ...input });
    sendData(res, 200, { id });
  };

/** Echo handlers for every operation availability owns. */
const availabilityHandlers = Object.fromEntries(v1OperationsOf('availability').map((op) => [op.operationId, echo(op.operationId)])) as unknown as OperationHandlers<'availability'>;

const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_m, name: string) => `${name}_1`);

let server: http.Server;
let base: string;

async function send(method: string, path: string, body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  const t = testApp();
  registerOperations(t, 'availability', availabilityHandlers, { fast: ['listSlots'] });
  t.finalize();
  server = await t.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

beforeEach(() => {
  seen.length = 0;
});

describe('checkOperationHandlers', () => {
  it('accepts one handler per owned operation, for every owner, and returns the owned operations in table order', () => {
    for (const owner of V1_OWNERS) {
      const owned = V1_OPERATIONS.filter((op) => op.owner === owner);
      expect(owned.length).toBeGreaterThan(0);
      const handlers = Object.fromEntries(owned.map((op) => [op.operationId, () => undefined]));
      expect(checkOperationHandlers(owner, handlers)).toEqual(owned);
    }
  });

  it('fails naming a missing handler and one for an operation the service does not own', () => {
    const { listSlots: _dropped, ...missing } = availabilityHandlers;
    expect(() => checkOperationHandlers('availability', missing)).toThrow(/availability: .*no handler for listSlots/);
    expect(() => checkOperationHandlers('availability', { ...availabilityHandlers, createBooking: () => undefined })).toThrow(
      /availability: .*handlers for operations it does not own: createBooking/,
    );
  });

  it('fails the start-up: registerOperations refuses an incomplete set and a fast path on a POST', () => {
    const { getEventType: _dropped, ...missing } = availabilityHandlers;
    expect(() => registerOperations(testApp(), 'availability', missing as OperationHandlers<'availability'>)).toThrow(/no handler for getEventType/);
    const invitation = Object.fromEntries(v1OperationsOf('invitation').map((op) => [op.operationId, echo(op.operationId)])) as unknown as OperationHandlers<'invitation'>;
    expect(() => registerOperations(testApp(), 'invitation', invitation, { fast: ['createBookingInvitation'] })).toThrow(/fast path takes only GET/);
  });
});

describe('registerOperations', () => {
  it('mounts every owned operation at the table method and path, with the path parameters', async () => {
    const owned = v1OperationsOf('availability');
    for (const op of owned) {
      const query = op.operationId === 'listSlots' ? '?from=2026-12-01&to=2026-12-02&timezone=UTC' : '';
      const res = await send(op.method, `${concrete(op.path)}${query}`);
      expect([op.operationId, res.status, res.body.data]).toEqual([op.operationId, 200, { id: op.operationId }]);
    }
    expect(seen.map((s) => s.id)).toEqual(owned.map((op) => op.operationId));
    expect(seen.find((s) => s.id === 'listSlots')).toMatchObject({ params: { eventType: 'eventType_1' }, query: { from: '2026-12-01', to: '2026-12-02', timezone: 'UTC' } });
    // A method the table does not give the path is the router's 405.
    expect((await send('POST', '/v1/event-types')).status).toBe(405);
  });

  it('parses the query with the table schema: its output reaches the handler, a bad one is 400 before it', async () => {
    await send('GET', '/v1/event-types?limit=5');
    expect(seen.at(-1)).toMatchObject({ id: 'listEventTypes', query: { limit: 5 }, body: undefined });
    const bad = await send('GET', '/v1/event-types/eventType_1/slots?from=2026-12-01&to=nope&timezone=UTC');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'to', issue: 'invalid_format' }]);
    expect(seen).toHaveLength(1);
  });

  it('refuses any query parameter where the operation takes none', async () => {
    const res = await send('GET', '/v1/event-types/eventType_1?expand=all');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'expand', issue: 'unknown_field' }]);
    await send('GET', '/v1/event-types/eventType_1');
    expect(seen).toEqual([{ id: 'getEventType', params: { eventType: 'eventType_1' }, query: {}, body: undefined }]);
  });

  it('parses an optional body when there is one, and takes `{}` but no field where the operation has no body', async () => {
    await send('GET', '/v1/event-types', '{"limit":3}');
    expect(seen.at(-1)).toMatchObject({ id: 'listEventTypes', body: { limit: 3 } });
    const bad = await send('GET', '/v1/event-types', '{"limit":3,"x":1}');
    expect([bad.status, bad.body.error.details]).toEqual([400, [{ field: 'x', issue: 'unknown_field' }]]);
    expect((await send('GET', '/v1/event-types/eventType_1', '{}')).status).toBe(200);
    const extra = await send('GET', '/v1/event-types/eventType_1', '{"x":1}');
    expect([extra.status, extra.body.error.details]).toEqual([400, [{ field: 'x', issue: 'unknown_field' }]]);
    expect(seen.map((s) => s.id)).toEqual(['listEventTypes', 'getEventType']);
  });
});

describe('operationAccess', () => {
  it('has one rule per owned operation: the gateway, for an API key with the table scope; widened rules keep the scope', () => {
    const table = operationAccess('availability', { listSlots: { callers: ['gateway', 'invitation'], principals: ['api_key', 'booking_page'] } });
    const owned = v1OperationsOf('availability');
    expect(Object.keys(table)).toEqual(owned.map((op) => `${op.method} ${op.path}`));
    for (const op of owned) {
      const rule = table[`${op.method} ${op.path}`]!;
      expect(rule.scope).toBe(op.scope);
      expect(rule.callers).toContain('gateway');
    }
    expect(table['GET /v1/event-types/:eventType/slots']).toEqual({ callers: ['gateway', 'invitation'], principals: ['api_key', 'booking_page'], scope: 'slots:read' });
    expect(table['GET /v1/event-types']).toEqual({ callers: ['gateway'], principals: ['api_key'], scope: 'event_types:read' });
  });
});
