import type { StubServer } from './support/stub-server';
import { ok, page } from './support/stub-server';
import { API_KEY, clientWithStub } from './support/harness';
import { makeBooking, aSlot, anEventType, anInvitation } from '../../contracts/test/fixtures';
import { SchedulingClient } from '../src';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withUrl = () => ({ ...anInvitation(), invitation_url: 'https://book.example.com/i/cred_abc' });

let stub: StubServer;
let client: SchedulingClient;

beforeEach(async () => {
  ({ stub, client } = await clientWithStub());
});
afterEach(async () => {
  // Close first: a failed expectation must not leave a server that keeps Jest from exiting.
  await stub.close();
  expect(stub.mismatches).toEqual([]);
});

const last = () => stub.requests[stub.requests.length - 1]!;

describe('each client method sends the request of api-v1.md and returns the typed data', () => {
  it('eventTypes.get, eventTypes.slots (query from/to/timezone) and eventTypes.list (cursor/limit in the query)', async () => {
    const et = anEventType();
    stub.enqueue(ok(et));
    await expect(client.eventTypes.get(et.id)).resolves.toEqual(et);
    expect(last()).toMatchObject({ method: 'GET', path: `/v1/event-types/${et.id}`, body: '' });

    const slot = aSlot();
    stub.enqueue(ok([slot]));
    await expect(client.eventTypes.slots(et.id, { from: '2026-11-22', to: '2026-11-23', timezone: 'Europe/Paris' })).resolves.toEqual([slot]);
    expect(last().path).toBe(`/v1/event-types/${et.id}/slots`);
    expect(Object.fromEntries(last().query)).toEqual({ from: '2026-11-22', to: '2026-11-23', timezone: 'Europe/Paris' });

    stub.enqueue(page([et], null));
    await expect(client.eventTypes.list({ limit: 5 }).page()).resolves.toMatchObject({ data: [et], next_cursor: null });
    expect(last()).toMatchObject({ method: 'GET', path: '/v1/event-types', body: '' });
    expect(Object.fromEntries(last().query)).toEqual({ limit: '5' });
  });

  it('bookings.create posts the JSON body with an automatic Idempotency-Key (a UUID), bearer auth and a user agent', async () => {
    const booking = makeBooking();
    stub.enqueue(ok(booking, 201));
    const body = { event_type_id: booking.event_type_id, start_at: new Date('2026-11-22T09:30:00Z'), guest: booking.guest, metadata: { order: 'A-17' } };
    await expect(client.bookings.create(body)).resolves.toEqual(booking);
    const req = last();
    expect(req).toMatchObject({ method: 'POST', path: '/v1/bookings' });
    expect(req.json).toEqual({ ...body, start_at: '2026-11-22T09:30:00.000Z' });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.headers['user-agent']).toMatch(/^sched-client\/1\.0\.0 /);
    expect(req.headers['idempotency-key']).toMatch(UUID_RE);
  });

  it('a new call gets a new Idempotency-Key; a caller-chosen key is sent as given', async () => {
    const booking = makeBooking();
    stub.enqueue(ok(booking, 201), ok(booking, 201), ok(booking, 201));
    const body = { event_type_id: booking.event_type_id, start_at: booking.start_at, guest: booking.guest };
    await client.bookings.create(body);
    await client.bookings.create(body);
    await client.bookings.create(body, { idempotencyKey: 'order-A-17-booking' });
    const keys = stub.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe('order-A-17-booking');
  });

  it('bookings.get, bookings.list (filters in the query), reschedule, cancel with and without a body', async () => {
    const b = makeBooking();
    stub.enqueue(ok(b));
    await expect(client.bookings.get(b.id)).resolves.toEqual(b);
    expect(last()).toMatchObject({ method: 'GET', path: `/v1/bookings/${b.id}` });
    expect(last().headers['idempotency-key']).toBeUndefined();

    stub.enqueue(page([b], null));
    const filters = { status: 'confirmed' as const, starts_from: new Date('2026-11-01T00:00:00Z'), starts_to: '2026-12-01T00:00:00Z', event_type_id: b.event_type_id, limit: 50 };
    await client.bookings.list(filters).page();
    expect(last().path).toBe('/v1/bookings');
    expect(Object.fromEntries(last().query)).toEqual({
      status: 'confirmed',
      starts_from: '2026-11-01T00:00:00.000Z',
      starts_to: '2026-12-01T00:00:00Z',
      event_type_id: b.event_type_id,
      limit: '50',
    });

    stub.enqueue(ok({ ...b, version: 2 }));
    await client.bookings.reschedule(b.id, { start_at: '2026-11-23T09:30:00Z', expected_version: 1 });
    expect(last()).toMatchObject({ method: 'POST', path: `/v1/bookings/${b.id}/reschedule`, json: { start_at: '2026-11-23T09:30:00Z', expected_version: 1 } });
    expect(last().headers['idempotency-key']).toMatch(UUID_RE);

    stub.enqueue(ok({ ...b, status: 'cancelled' }), ok({ ...b, status: 'cancelled' }));
    await client.bookings.cancel(b.id, { expected_version: 2 });
    expect(last()).toMatchObject({ method: 'POST', path: `/v1/bookings/${b.id}/cancel`, json: { expected_version: 2 } });
    await expect(client.bookings.cancel(b.id)).resolves.toMatchObject({ status: 'cancelled' });
    expect(last().json).toEqual({});
  });

  it('bookingInvitations.create/get/list/revoke/reissue use their paths; revoke and reissue send no body', async () => {
    const inv = anInvitation();
    stub.enqueue(ok(withUrl(), 201));
    const created = await client.bookingInvitations.create({ event_type_id: inv.event_type_id, expires_at: new Date('2027-01-01T00:00:00Z'), max_uses: 3, email: null });
    expect(created.invitation_url).toBe('https://book.example.com/i/cred_abc');
    expect(last()).toMatchObject({ method: 'POST', path: '/v1/booking-invitations', json: { event_type_id: inv.event_type_id, expires_at: '2027-01-01T00:00:00.000Z', max_uses: 3, email: null } });

    stub.enqueue(ok(inv));
    await expect(client.bookingInvitations.get(inv.id)).resolves.toEqual(inv);
    expect(last().path).toBe(`/v1/booking-invitations/${inv.id}`);

    stub.enqueue(page([inv], null));
    await client.bookingInvitations.list({ status: 'active', event_type_id: inv.event_type_id }).page();
    expect(Object.fromEntries(last().query)).toEqual({ status: 'active', event_type_id: inv.event_type_id });

    stub.enqueue(ok({ ...inv, status: 'revoked', revoked_at: inv.updated_at }));
    await client.bookingInvitations.revoke(inv.id);
    expect(last()).toMatchObject({ method: 'POST', path: `/v1/booking-invitations/${inv.id}/revoke`, body: '' });
    expect(last().headers['content-type']).toBeUndefined();

    stub.enqueue(ok(withUrl()));
    await expect(client.bookingInvitations.reissue(inv.id, { idempotencyKey: 'reissue-1' })).resolves.toMatchObject({ invitation_url: expect.any(String) });
    expect(last()).toMatchObject({ method: 'POST', path: `/v1/booking-invitations/${inv.id}/reissue`, body: '' });
    expect(last().headers['idempotency-key']).toBe('reissue-1');
  });

  it('escapes identifiers in the path and refuses an empty one before sending anything', async () => {
    stub.enqueue({ status: 404, body: { error: { code: 'not_found', message: 'The resource was not found.', details: [] }, meta: {} } });
    await expect(client.bookings.get('bkg_a/../b')).rejects.toMatchObject({ code: 'not_found' });
    expect(last().path).toBe('/v1/bookings/bkg_a%2F..%2Fb');
    expect(() => client.bookings.get('')).toThrow(TypeError);
  });

  it('keeps a path prefix of the base URL', async () => {
    const prefixed = new SchedulingClient({ baseUrl: `${stub.url}/api/`, apiKey: API_KEY });
    stub.enqueue({ status: 200, body: { data: makeBooking(), meta: {} } });
    await prefixed.bookings.get('bkg_x');
    expect(last().path).toBe('/api/v1/bookings/bkg_x');
  });
});
