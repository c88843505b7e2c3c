import { bookingSchema } from '@sched/contracts';
import { credentialFor, internalAuthorization, waitFor } from '@sched/testing';
import { refusing, bookable } from './support/availability-stub';
import { createBody, startBookingHarness, type BookingHarness } from './support/booking-harness';
import { startEventTap } from './support/event-tap';

/**
 * POST /internal/v1/workspaces/{ws}/bookings (contracts internalCreateBookingSchema): the hosted booking
 * page's create, called by the invitation service straight (not through the gateway). Same rules and
 * answers as POST /v1/bookings, with source booking_page and the invitation carried on booking.created.
 */
let h: BookingHarness;
beforeAll(async () => {
  h = await startBookingHarness();
});
afterAll(async () => {
  await h.close();
});

const INVITATION = 'biv_AAAAAAAAAAAAAAAAAAAAAA';

/** As the invitation service calls it: a booking page visitor's credential for this workspace and the body's invitation. */
async function internalCreate(ws: string, json: any, headers: Record<string, string> = {}) {
  const path = `/internal/v1/workspaces/${ws}/bookings`;
  const res = await fetch(`${h.bookingUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(await credentialFor('booking', path, { invitationId: json?.invitation_id ?? undefined })), ...headers },
    body: JSON.stringify(json),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

it('creates a booking_page Booking in the path’s workspace, and booking.created carries the invitation id', async () => {
  // What the invitation service's queue binds: only the Bookings made through an invitation.
  const invitations = await startEventTap(h.amqp, 'test.invitation-created', ['booking.created.invitation']);
  const res = await internalCreate(h.main.workspaceId, { ...createBody(), source: 'booking_page', invitation_id: INVITATION });
  expect(res.status).toBe(201);
  expect(bookingSchema.parse(res.body.data)).toEqual(res.body.data);
  expect(res.body.data).toMatchObject({ source: 'booking_page', status: 'confirmed', version: 1 });
  const { rows } = await h.db.adminPool.query(`SELECT payload FROM booking.outbox WHERE payload->'data'->'booking'->>'id' = $1`, [res.body.data.id]);
  expect(rows[0].payload.data.internal.invitation_id).toBe(INVITATION);
  // The relay publishes it under booking.created.invitation; an API Booking (no invitation) does not reach that binding.
  const plain = await h.api('POST', '/v1/bookings', { json: createBody() });
  expect(plain.status).toBe(201);
  await waitFor(async () => (await h.db.adminPool.query('SELECT count(*)::int AS n FROM booking.outbox WHERE published_at IS NULL')).rows[0].n === 0, { timeoutMs: 10_000 });
  await invitations.drain();
  expect(invitations.messages.map((m) => [m.routingKey, m.body.type, m.body.data.booking.id])).toEqual([['booking.created.invitation', 'booking.created', res.body.data.id]]);
  await invitations.close();
  // The v1 API shows it to the workspace, without the internal field.
  const read = await h.api('GET', `/v1/bookings/${res.body.data.id}`);
  expect(read.body.data).toEqual(res.body.data);
  // Later events keep the invitation too.
  const cancelled = await h.api('POST', `/v1/bookings/${res.body.data.id}/cancel`);
  expect(cancelled.status).toBe(200);
  const events = await h.db.adminPool.query(`SELECT payload FROM booking.outbox WHERE type = 'booking.cancelled' AND payload->'data'->'booking'->>'id' = $1`, [res.body.data.id]);
  expect(events.rows[0].payload.data.internal.invitation_id).toBe(INVITATION);
});

it('replays under the caller’s Idempotency-Key (its reservation id): one Booking however often it retries', async () => {
  const json = { ...createBody(), source: 'booking_page', invitation_id: INVITATION };
  const first = await internalCreate(h.main.workspaceId, json, { 'idempotency-key': 'rsv_1' });
  const again = await internalCreate(h.main.workspaceId, json, { 'idempotency-key': 'rsv_1' });
  expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
  expect(again.body.data).toEqual(first.body.data);
});

it('answers like the public create: 400 for a bad body or source, 409 when the slot is gone', async () => {
  const bad = await internalCreate(h.main.workspaceId, { ...createBody(), source: 'api' });
  expect(bad.status).toBe(400);
  expect(bad.body.error.details).toContainEqual({ field: 'source', issue: 'invalid_value' });
  const missing = await internalCreate(h.main.workspaceId, createBody());
  expect(missing.status).toBe(400);
  expect(missing.body.error.details.map((d: any) => d.field)).toEqual(['source']);
  h.stub.behave(refusing('slot_unavailable'));
  const gone = await internalCreate(h.main.workspaceId, { ...createBody(), source: 'booking_page' });
  expect([gone.status, gone.body.error.code]).toEqual([409, 'slot_unavailable']);
  h.stub.behave(bookable());
});

it('is scoped by the path’s workspace: another workspace cannot see the Booking', async () => {
  const res = await internalCreate(h.main.workspaceId, { ...createBody(), source: 'booking_page', invitation_id: null });
  expect(res.status).toBe(201);
  const other = await h.newWorkspace();
  expect((await h.api('GET', `/v1/bookings/${res.body.data.id}`, { as: other })).status).toBe(404);
  expect(h.stub.calls.at(-1)!.workspaceId).toBe(h.main.workspaceId);
});

describe('only the invitation service, for the visitor it vouches for, may create a booking_page Booking', () => {
  const body = () => ({ ...createBody(), source: 'booking_page', invitation_id: INVITATION });
  const count = async () => Number((await h.db.adminPool.query(`SELECT count(*) FROM booking.bookings`)).rows[0].count);

  it('refuses a call without a credential (401), from another service (403), for another invitation (403), for another workspace (403)', async () => {
    const before = await count();
    const ws = h.main.workspaceId;
    const none = await internalCreate(ws, body(), { authorization: '' });
    expect([none.status, none.body.error.code]).toEqual([401, 'unauthenticated']);
    const fromGateway = await internalCreate(ws, body(), await internalAuthorization('booking', { principal: 'booking_page', workspaceId: ws, invitationId: INVITATION }, { caller: 'gateway' }));
    expect([fromGateway.status, fromGateway.body.error.code]).toEqual([403, 'forbidden']);
    const asApiKey = await internalCreate(ws, body(), await internalAuthorization('booking', { principal: 'api_key', workspaceId: ws, apiKeyId: 'key_x', scopes: ['bookings:write'] }, { caller: 'invitation' }));
    expect(asApiKey.status).toBe(403);
    const otherInvitation = await internalCreate(ws, body(), await internalAuthorization('booking', { principal: 'booking_page', workspaceId: ws, invitationId: 'biv_BBBBBBBBBBBBBBBBBBBBBB' }, { caller: 'invitation' }));
    expect([otherInvitation.status, otherInvitation.body.error.code]).toEqual([403, 'forbidden']);
    const publicPageCredential = await internalCreate(ws, body(), await internalAuthorization('booking', { principal: 'booking_page', workspaceId: ws }, { caller: 'invitation' }));
    expect(publicPageCredential.status).toBe(403);
    const otherWorkspace = await internalCreate(ws, body(), await internalAuthorization('booking', { principal: 'booking_page', workspaceId: 'wsp_other000000000000000', invitationId: INVITATION }, { caller: 'invitation' }));
    expect([otherWorkspace.status, otherWorkspace.body.error.code]).toEqual([403, 'forbidden']);
    expect(await count()).toBe(before);
  });

  it('refuses the v1 create from anyone but the gateway, and a key without bookings:write', async () => {
    const ws = h.main.workspaceId;
    const post = async (auth: { authorization: string }) =>
      fetch(`${h.bookingUrl}/v1/bookings`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(createBody()) });
    const fromInvitation = await post(await internalAuthorization('booking', { principal: 'api_key', workspaceId: ws, apiKeyId: 'key_x', scopes: ['bookings:write'] }, { caller: 'invitation' }));
    expect(fromInvitation.status).toBe(403);
    const readOnly = await post(await internalAuthorization('booking', { principal: 'api_key', workspaceId: ws, apiKeyId: 'key_x', scopes: ['bookings:read'] }));
    expect([readOnly.status, ((await readOnly.json()) as any).error.code]).toEqual([403, 'insufficient_scope']);
  });
});
