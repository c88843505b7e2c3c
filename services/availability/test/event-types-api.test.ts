import { eventTypeListResponseSchema, eventTypeResponseSchema, makeEvent } from '@sched/contracts';
import { waitFor } from '@sched/testing';
import { startSystem, Tenant, type System } from './support/system';

let sys: System;
let t: Tenant;
let ids: string[];

beforeAll(async () => {
  sys = await startSystem();
  t = await Tenant.create(sys);
  const hostId = await t.host();
  ids = [];
  for (let i = 0; i < 21; i++) ids.push(await t.eventType(hostId, { slug: `type-${i}` }));
});

afterAll(async () => {
  await sys?.close();
});

const list = (query = '', json?: unknown) => t.v1('GET', `/v1/event-types${query}`, json === undefined ? {} : { json });
const detailsOf = async (query: string, json?: unknown) => {
  const res = await list(query, json);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  return res.body.error.details;
};

describe('GET /v1/event-types', () => {
  it('returns the first 20 by default in (created_at, id) order, each exactly the v1 Event Type (no access)', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    eventTypeListResponseSchema.parse(res.body);
    expect(res.body.data.map((e: any) => e.id)).toEqual(ids.slice(0, 20));
    expect(res.body.data[0]).not.toHaveProperty('access');
    expect(typeof res.body.meta.next_cursor).toBe('string');
  });

  it('pages with a signed cursor given in the query or in the JSON body, ending with next_cursor null', async () => {
    const first = await list('?limit=8');
    const second = await list('', { cursor: first.body.meta.next_cursor, limit: 8 });
    const third = await list(`?cursor=${encodeURIComponent(second.body.meta.next_cursor)}&limit=8`);
    expect([...first.body.data, ...second.body.data, ...third.body.data].map((e: any) => e.id)).toEqual(ids);
    expect(third.body.data).toHaveLength(5);
    expect(third.body.meta.next_cursor).toBeNull();
  });

  it('refuses a tampered cursor, one made by another list, one of another workspace, and different values in query and body', async () => {
    const { next_cursor: cursor } = (await list('?limit=2')).body.meta;
    const [payload, mac] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ createdAt: '2020-01-01T00:00:00.000Z', id: 'evt_x' })).toString('base64url');
    expect(await detailsOf(`?cursor=${forged}.${mac}`)).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    expect(await detailsOf(`?cursor=${payload}.${mac}x`)).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    const adminCursor = (await t.admin('GET', '/event-types?limit=2')).body.meta.next_cursor;
    expect(await detailsOf('', { cursor: adminCursor })).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    const t2 = await Tenant.create(sys);
    expect((await t2.v1('GET', `/v1/event-types?cursor=${encodeURIComponent(cursor)}`)).status).toBe(400);
    expect(await detailsOf('?limit=2', { limit: 3 })).toEqual([{ field: 'limit', issue: 'conflict' }]);
    expect((await list('?limit=2', { limit: 2 })).status).toBe(200);
  });

  it('limit 1 and 100 pass; 0, 101, 01 and 1.5 do not (query and body)', async () => {
    expect((await list('?limit=1')).body.data).toHaveLength(1);
    expect((await list('?limit=100')).body.data).toHaveLength(21);
    expect((await list('', { limit: 1 })).body.data).toHaveLength(1);
    expect((await list('', { limit: 100 })).status).toBe(200);
    expect(await detailsOf('?limit=0')).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(await detailsOf('?limit=101')).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(await detailsOf('?limit=01')).toEqual([{ field: 'limit', issue: 'invalid_format' }]);
    expect(await detailsOf('', { limit: 0 })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(await detailsOf('', { limit: 101 })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(await detailsOf('', { limit: 1.5 })).toEqual([{ field: 'limit', issue: 'invalid_type' }]);
  });

  it('a 2048-character cursor passes the length rule (then fails verification); 2049 is too long', async () => {
    expect(await detailsOf(`?cursor=${'a'.repeat(2048)}`)).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    expect(await detailsOf(`?cursor=${'a'.repeat(2049)}`)).toEqual([{ field: 'cursor', issue: 'too_long' }]);
    expect(await detailsOf('', { cursor: 'a'.repeat(2049) })).toEqual([{ field: 'cursor', issue: 'too_long' }]);
    expect(await detailsOf('?cursor=')).toEqual([{ field: 'cursor', issue: 'too_short' }]);
  });

  it('refuses unknown query parameters and body fields, naming them', async () => {
    expect(await detailsOf('?status=active')).toEqual([{ field: 'status', issue: 'unknown_field' }]);
    expect(await detailsOf('', { order: 'desc' })).toEqual([{ field: 'order', issue: 'unknown_field' }]);
    expect(await detailsOf('?limit=1&limit=2')).toEqual([{ field: 'limit', issue: 'duplicate' }]);
  });

  it('lists only the caller\'s workspace', async () => {
    const t2 = await Tenant.create(sys);
    const mine = await t2.eventType(await t2.host());
    expect((await t2.v1('GET', '/v1/event-types')).body.data.map((e: any) => e.id)).toEqual([mine]);
  });
});

describe('GET /v1/event-types/{eventType}', () => {
  it('follows the host\'s calendar and schedule: calendar_not_connected → no_availability → bookable → calendar_error → calendar_not_connected, and inactive first', async () => {
    const hostId = await t.host();
    const evt = await t.eventType(hostId);
    const read = async () => {
      const res = await t.v1('GET', `/v1/event-types/${evt}`);
      expect(res.status).toBe(200);
      eventTypeResponseSchema.parse(res.body);
      return [res.body.data.bookable, res.body.data.unavailable_reason];
    };
    expect(await read()).toEqual([false, 'calendar_not_connected']);
    await t.calendarStatus(hostId, 'connected', evt, 'no_availability');
    expect(await read()).toEqual([false, 'no_availability']);
    await t.schedule(hostId, { weekly: { fri: [{ start: '09:00', end: '10:00' }] } });
    expect(await read()).toEqual([true, null]);
    await t.calendarStatus(hostId, 'error', evt);
    expect(await read()).toEqual([false, 'calendar_error']);
    await t.calendarStatus(hostId, 'disconnected', evt);
    expect(await read()).toEqual([false, 'calendar_not_connected']);
    await t.admin('PATCH', `/event-types/${evt}`, { status: 'inactive' });
    expect(await read()).toEqual([false, 'inactive']);
  });

  it('ignores a calendar.connection_updated older than the state it holds (events out of order)', async () => {
    const hostId = await t.host();
    await t.schedule(hostId, { weekly: { fri: [{ start: '09:00', end: '10:00' }] } });
    const evt = await t.eventType(hostId);
    await t.calendarStatus(hostId, 'connected', evt);
    const stale = makeEvent('calendar.connection_updated', {
      workspaceId: t.ws,
      occurredAt: new Date(Date.now() - 60_000),
      data: { host_id: hostId, status: 'error', error_code: 'auth_failed' },
    });
    await sys.publish(stale);
    await waitFor(async () => (await sys.db.adminPool.query('SELECT 1 FROM availability.inbox WHERE event_id = $1', [stale.id])).rowCount === 1);
    expect((await t.v1('GET', `/v1/event-types/${evt}`)).body.data.bookable).toBe(true);
  });

  it('answers 404 for another workspace\'s id exactly as for an unknown one, and 400 for unknown query parameters', async () => {
    const t2 = await Tenant.create(sys);
    const foreign = await t2.eventType(await t2.host());
    const a = await t.v1('GET', `/v1/event-types/${foreign}`);
    const b = await t.v1('GET', '/v1/event-types/evt_neverexisted000000000000');
    expect(a.status).toBe(404);
    expect({ ...a.body, meta: null }).toEqual({ ...b.body, meta: null });
    const bad = await t.v1('GET', `/v1/event-types/${ids[0]}?expand=host`);
    expect(bad.body.error.details).toEqual([{ field: 'expand', issue: 'unknown_field' }]);
  });
});
