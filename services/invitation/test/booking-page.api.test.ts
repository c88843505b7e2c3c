import { eventRoutingKey, makeEvent } from '@sched/contracts';
import { makeBooking, waitFor, waitForEventsHandled } from '@sched/testing';
import { eventType } from './support/stubs';
import { call, startPageSystem, type PageSystem } from './support/page-system';

let sys: PageSystem;
let ws: { id: string; slug: string; key: string };
let evt: string;
let publicEvt: string;

const DAY = 86_400_000;
// Slots on a fixed future day (UTC), one per hour from 09:00.
const slotDay = new Date(Math.floor(Date.now() / DAY) * DAY + 10 * DAY);
const slot = (i: number) => new Date(slotDay.getTime() + (9 + i) * 3600_000);
const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const SLOTS = Array.from({ length: 12 }, (_, i) => slot(i));

const credentialOf = (url: string) => url.split('/i/')[1]!;
const page = (method: string, path: string, credential: string | null, json?: unknown) =>
  call(sys.gateway.url, method, `/book/api${path}`, { json, headers: credential ? { 'x-invitation-credential': credential } : {} });
const guest = (email = 'guest@example.com') => ({ name: 'Ada Guest', email, timezone: 'Europe/Paris' });
const book = (credential: string, start: Date, email?: string) => page('POST', '/invitation/bookings', credential, { start_at: start.toISOString(), guest: guest(email) });

async function invite(body: Record<string, unknown> = {}): Promise<{ id: string; credential: string }> {
  const res = await call(sys.gateway.url, 'POST', '/v1/booking-invitations', {
    token: ws.key,
    json: { event_type_id: evt, expires_at: new Date(Date.now() + 30 * DAY).toISOString(), max_uses: 1, ...body },
  });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, credential: credentialOf(res.body.data.invitation_url) };
}

const read = async (id: string) => (await call(sys.gateway.url, 'GET', `/v1/booking-invitations/${id}`, { token: ws.key })).body.data;
const reservations = async (id: string) =>
  (await sys.db.adminPool.query('SELECT status, booking_id FROM invitation.use_reservations WHERE invitation_id = $1 ORDER BY created_at', [id])).rows;

beforeAll(async () => {
  sys = await startPageSystem({ gatewayEnv: { BOOKING_PAGE_RATE_LIMIT: '1000' }, invitationEnv: { BOOKING_TIMEOUT_MS: '700', RESERVATION_TTL_MS: '5000' } });
  ws = await sys.workspace('Page Co');
  evt = sys.availability.add(ws.id, eventType({ name: 'Private consult', slug: 'consult' }), SLOTS).id;
  publicEvt = sys.availability.add(ws.id, eventType({ name: 'Open office hours', slug: 'office-hours', access: 'public' }), SLOTS).id;
});

afterAll(async () => {
  await sys?.stop();
});

afterEach(() => {
  sys.clock.now = null;
  sys.availability.answerSlotsWith(null);
});

describe('the invitation page API', () => {
  it('shows an active invitation: Event Type name and duration, and whether an email is required, never the email', async () => {
    const { credential } = await invite({ email: 'secret.person@example.com' });
    const res = await page('GET', '/invitation', credential);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ kind: 'invitation', status: 'active', email_restricted: true, event_type: { name: 'Private consult', duration_minutes: 30 } });
    expect(JSON.stringify(res.body)).not.toContain('secret.person');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 404 for a missing, malformed or unknown credential', async () => {
    expect((await page('GET', '/invitation', null)).status).toBe(404);
    expect((await page('GET', '/invitation', 'short')).status).toBe(404);
    expect((await page('GET', '/invitation', 'A'.repeat(43))).status).toBe(404);
  });

  it("lists the free Slots of the invitation's Event Type from availability, in the asked time zone", async () => {
    const { credential } = await invite();
    const day = dayOf(slotDay);
    const res = await page('GET', `/invitation/slots?from=${day}&to=${day}&timezone=America/New_York`, credential);
    expect(res.status).toBe(200);
    expect(res.body.data.timezone).toBe('America/New_York');
    expect(res.body.data.slots[0]).toMatchObject({ start_at: slot(0).toISOString(), timezone: 'America/New_York' });
    expect(res.body.data.slots[0].local_start_at).toMatch(/-0[45]:00$/);
    expect(sys.availability.calls.at(-1)).toEqual({ path: `/v1/event-types/${evt}/slots`, workspace: ws.id });
    const bad = await page('GET', `/invitation/slots?from=${day}&to=${day}&timezone=Mars/Base`, credential);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'timezone', issue: 'invalid_value' }]);
  });

  it('passes availability refusals through (503 calendar_unavailable with Retry-After)', async () => {
    const { credential } = await invite();
    sys.availability.answerSlotsWith({
      status: 503,
      body: { error: { code: 'calendar_unavailable', message: 'The calendar provider is unavailable; try again later.', details: [] }, meta: { request_id: 'x' } },
      headers: { 'retry-after': '30' },
    });
    const res = await page('GET', `/invitation/slots?from=${dayOf(slotDay)}&to=${dayOf(slotDay)}&timezone=UTC`, credential);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('calendar_unavailable');
    expect(res.headers.get('retry-after')).toBe('30');
  });

  it('books with source booking_page and the invitation id, counts the use, and the invitation is then exhausted', async () => {
    const { id, credential } = await invite();
    const res = await book(credential, slot(0));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'confirmed', source: 'booking_page', start_at: slot(0).toISOString(), guest: guest() });
    const sent = sys.booking.created.find((b) => b.bookingId === res.body.data.id)!;
    expect(sent.workspaceId).toBe(ws.id);
    expect(sent.body).toMatchObject({ source: 'booking_page', invitation_id: id, event_type_id: evt });
    expect(sent.idempotencyKey).toMatch(/^rsv_/);
    expect(await read(id)).toMatchObject({ used_count: 1, status: 'exhausted' });
    expect(await reservations(id)).toEqual([{ status: 'confirmed', booking_id: res.body.data.id }]);
    const info = await page('GET', '/invitation', credential);
    expect(info.body.data.status).toBe('exhausted');
    const again = await book(credential, slot(1));
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'invitation_not_active', details: [{ field: 'invitation', issue: 'exhausted' }] });
    expect((await page('GET', `/invitation/slots?from=${dayOf(slotDay)}&to=${dayOf(slotDay)}&timezone=UTC`, credential)).status).toBe(409);
  });

  it("refuses an email other than the invitation's (compared case-insensitively) and consumes nothing", async () => {
    const { id, credential } = await invite({ email: 'Invited@Example.com' });
    const wrong = await book(credential, slot(2), 'someone.else@example.com');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([{ field: 'guest.email', issue: 'not_invited' }]);
    expect(await read(id)).toMatchObject({ used_count: 0, status: 'active' });
    const right = await book(credential, slot(2), 'invited@EXAMPLE.com');
    expect(right.status).toBe(201);
    expect((await read(id)).used_count).toBe(1);
  });

  it('consumes nothing when the booking fails: a 409 slot_unavailable or a 503 releases the reserved use', async () => {
    const { id, credential } = await invite({ max_uses: 1 });
    const taken = await book(credential, slot(0)); // taken by an earlier test's booking
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('slot_unavailable');
    sys.booking.next({ status: 503, body: { error: { code: 'calendar_unavailable', message: 'down', details: [] }, meta: { request_id: 'x' } } });
    const down = await book(credential, slot(3));
    expect(down.status).toBe(503);
    expect(await read(id)).toMatchObject({ used_count: 0, status: 'active' });
    expect((await reservations(id)).map((r) => r.status)).toEqual(['released', 'released']);
    expect((await book(credential, slot(3))).status).toBe(201);
    expect(await read(id)).toMatchObject({ used_count: 1, status: 'exhausted' });
  });

  it('shows revoked, expired and not-yet-valid invitations as such and refuses to book with them', async () => {
    const revoked = await invite({ max_uses: 2 });
    await call(sys.gateway.url, 'POST', `/v1/booking-invitations/${revoked.id}/revoke`, { token: ws.key });
    const expiring = await invite({ expires_at: new Date(Date.now() + DAY).toISOString() });
    const later = await invite({ not_before: new Date(Date.now() + DAY).toISOString() });
    expect((await page('GET', '/invitation', revoked.credential)).body.data.status).toBe('revoked');
    expect((await page('GET', '/invitation', later.credential)).body.data).toMatchObject({ status: 'not_yet_valid', not_before: expect.any(String) });
    const denied = await book(revoked.credential, slot(5));
    expect(denied.status).toBe(409);
    expect(denied.body.error.details).toEqual([{ field: 'invitation', issue: 'revoked' }]);
    expect((await book(later.credential, slot(5))).body.error.details).toEqual([{ field: 'invitation', issue: 'not_yet_valid' }]);
    sys.clock.now = new Date(Date.now() + DAY + 1000);
    expect((await page('GET', '/invitation', expiring.credential)).body.data.status).toBe('expired');
    expect((await book(expiring.credential, slot(5))).body.error.details).toEqual([{ field: 'invitation', issue: 'expired' }]);
    expect(sys.booking.created.some((b) => b.body.start_at === slot(5).toISOString())).toBe(false);
  });

  it('kills the old credential on the page the moment a reissue commits', async () => {
    const inv = await invite({ max_uses: 3 });
    const reissued = await call(sys.gateway.url, 'POST', `/v1/booking-invitations/${inv.id}/reissue`, { token: ws.key });
    expect((await book(inv.credential, slot(6))).status).toBe(404);
    expect((await book(credentialOf(reissued.body.data.invitation_url), slot(6))).status).toBe(201);
  });
});

describe('the use saga across invitation and booking', () => {
  it('with max_uses 1, ten simultaneous bookings on different slots make exactly one Booking; used_count 1, exhausted', async () => {
    const { id, credential } = await invite({ max_uses: 1 });
    const before = sys.booking.created.length;
    sys.booking.setDelay(100); // every booking call is in flight while the others try to reserve
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => book(credential, new Date(slot(0).getTime() + DAY + i * 3600_000))));
    sys.booking.setDelay(0);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.body.error.code === 'invitation_not_active')).toHaveLength(9);
    expect(sys.booking.created.length - before).toBe(1);
    expect(await read(id)).toMatchObject({ used_count: 1, status: 'exhausted' });
  });

  it('keeps the use reserved when booking does not answer, and booking.created confirms it exactly once', async () => {
    const { id, credential } = await invite({ max_uses: 1 });
    sys.booking.next('commit_then_hang'); // booking commits, then the answer is lost
    const lost = await book(credential, slot(7));
    expect(lost.status).toBe(504);
    expect(lost.body.error.code).toBe('upstream_unavailable');
    expect(await reservations(id)).toEqual([{ status: 'pending', booking_id: null }]);
    // The held use blocks a second booking while it is live.
    const blocked = await book(credential, slot(8));
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.details).toEqual([{ field: 'invitation', issue: 'uses_in_progress' }]);
    expect(blocked.headers.get('retry-after')).toBe('1');

    const made = sys.booking.created.find((b) => b.body.invitation_id === id)!;
    const booking = { id: made.bookingId, start_at: slot(7).toISOString(), guest: guest() };
    const event = bookingCreated(ws.id, booking, id);
    await sys.invitation.broker.publish(event, eventRoutingKey(event)); // booking.created.invitation, as booking routes it
    await waitFor(async () => (await read(id)).used_count === 1, { timeoutMs: 10000 });
    expect(await reservations(id)).toEqual([{ status: 'confirmed', booking_id: made.bookingId }]);
    // A redelivery (under the bare key a booking replica before routing keys uses: both keys reach this
    // queue during a rolling upgrade), and a second message about the same Booking, change nothing.
    const from = sys.serviceLogs.length;
    const second = bookingCreated(ws.id, booking, id);
    await sys.invitation.broker.publish(event, 'booking.created');
    await sys.invitation.broker.publish(second, eventRoutingKey(second));
    await waitForEventsHandled(sys.serviceLogs, [event.id, second.id], { from, timeoutMs: 10000 });
    expect(await read(id)).toMatchObject({ used_count: 1, status: 'exhausted' });
    expect(await reservations(id)).toHaveLength(1);
  });

  it('lets a lapsed reservation go after its TTL; a late booking.created never pushes used_count past max_uses', async () => {
    const { id, credential } = await invite({ max_uses: 1 });
    sys.booking.next('hang');
    expect((await book(credential, slot(9))).status).toBe(504);
    expect((await book(credential, slot(10))).status).toBe(409);
    sys.clock.now = new Date(Date.now() + 6000); // past RESERVATION_TTL_MS
    const second = await book(credential, slot(10));
    expect(second.status).toBe(201);
    expect(await read(id)).toMatchObject({ used_count: 1, status: 'exhausted' });
    // The hung request's Booking turns out to exist after all (e.g. booking committed late).
    const late = bookingCreated(ws.id, { id: 'bkg_latebookingxxxxxxxxxxxx', start_at: slot(9).toISOString(), guest: guest() }, id);
    await sys.invitation.broker.publish(late, eventRoutingKey(late));
    await waitFor(async () => (await reservations(id)).every((r) => r.status === 'confirmed'), { timeoutMs: 10000 });
    expect((await read(id)).used_count).toBe(1);
  });

  it('ignores booking.created messages of Bookings made without an invitation, whatever key reaches its queue', async () => {
    const { id } = await invite();
    const ignored = bookingCreated(ws.id, { id: 'bkg_apibookingxxxxxxxxxxxxx', start_at: slot(11).toISOString(), guest: guest() }, null);
    // booking routes it as booking.created.no_invitation, which this queue is not bound to; under the bare key
    // (a booking replica before routing keys) or a wrong one it arrives, and the guard on its content drops it.
    await sys.invitation.broker.publish(ignored, eventRoutingKey(ignored));
    await sys.invitation.broker.publish(ignored, 'booking.created');
    await sys.invitation.broker.publish(ignored, 'booking.created.invitation');
    // It is acknowledged without a line or a row: a later message of another invitation, once handled, says it was seen.
    const other = await invite();
    const marker = bookingCreated(ws.id, { id: 'bkg_markerbookingxxxxxxxxxx', start_at: slot(11).toISOString(), guest: guest() }, other.id);
    await sys.invitation.broker.publish(marker, eventRoutingKey(marker));
    await waitForEventsHandled(sys.serviceLogs, [marker.id], { timeoutMs: 10000 });
    expect((await read(id)).used_count).toBe(0);
    expect((await sys.db.adminPool.query('SELECT 1 FROM invitation.inbox WHERE event_id = $1', [ignored.id])).rows).toEqual([]);
  });
});

describe('the confirm POST under the page token (Idempotency-Key): a double submit, a retry or a reload books once', () => {
  const token = () => `page_${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const bookWith = (credential: string, key: string, start: Date, email?: string) =>
    call(sys.gateway.url, 'POST', '/book/api/invitation/bookings', {
      json: { start_at: start.toISOString(), guest: guest(email) },
      headers: { 'x-invitation-credential': credential, 'idempotency-key': key },
    });
  const bookPublicWith = (key: string, start: Date, email: string) =>
    call(sys.gateway.url, 'POST', `/book/api/public/${ws.slug}/office-hours/bookings`, { json: { start_at: start.toISOString(), guest: guest(email) }, headers: { 'idempotency-key': key } });
  const bookingsOf = (invitationId: string) => sys.booking.created.filter((b) => b.body.invitation_id === invitationId);
  const later = (h: number) => new Date(slot(0).getTime() + 2 * DAY + h * 3600_000);

  it('answers a repeated POST with the same token with the first answer (Idempotent-Replayed): one Booking, one use', async () => {
    const { id, credential } = await invite({ max_uses: 2 });
    const key = token();
    const first = await bookWith(credential, key, later(0));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await bookWith(credential, key, later(0));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.meta.request_id).not.toBe(first.body.meta.request_id);
    expect(bookingsOf(id)).toHaveLength(1);
    // booking's own key is derived from the page token, never the token itself.
    expect(bookingsOf(id)[0]!.idempotencyKey).toMatch(/^page_[0-9a-f]{64}$/);
    expect(await read(id)).toMatchObject({ used_count: 1, status: 'active' });
    expect(await reservations(id)).toEqual([{ status: 'confirmed', booking_id: first.body.data.id }]);
  });

  it('answers 422 idempotency_key_reused for the same token with another body, and books nothing more', async () => {
    const { id, credential } = await invite({ max_uses: 3 });
    const key = token();
    expect((await bookWith(credential, key, later(1))).status).toBe(201);
    const other = await bookWith(credential, key, later(2));
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    expect(bookingsOf(id)).toHaveLength(1);
    expect((await read(id)).used_count).toBe(1);
  });

  it('scopes the token to the invitation (or public page): another visitor with the same token value books on its own', async () => {
    const a = await invite();
    const b = await invite();
    const key = token();
    const first = await bookWith(a.credential, key, later(3));
    const second = await bookWith(b.credential, key, later(4));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.id).not.toBe(first.body.data.id);
    const open = await bookPublicWith(key, later(5), 'visitor@example.com');
    expect(open.status).toBe(201);
    expect(open.headers.get('idempotent-replayed')).toBeNull();
    expect((await bookPublicWith(key, later(5), 'visitor@example.com')).headers.get('idempotent-replayed')).toBe('true');
    expect(sys.booking.created.filter((x) => x.body.guest.email === 'visitor@example.com')).toHaveLength(1);
  });

  it('books once when two identical POSTs run at the same time; a held use answers 409 with Retry-After, and its retry replays', async () => {
    const two = await invite({ max_uses: 2 });
    const one = await invite({ max_uses: 1 });
    sys.booking.setDelay(300); // both requests are in the saga together
    const keyTwo = token();
    const keyOne = token();
    const [a, b, c, d] = await Promise.all([
      bookWith(two.credential, keyTwo, later(6)),
      bookWith(two.credential, keyTwo, later(6)),
      bookWith(one.credential, keyOne, later(7)),
      bookWith(one.credential, keyOne, later(7)),
    ]);
    sys.booking.setDelay(0);
    // Two uses free: both ran the saga; booking's key (derived from the token) made one Booking.
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.data.id).toBe(a.body.data.id);
    expect(bookingsOf(two.id)).toHaveLength(1);
    expect(await read(two.id)).toMatchObject({ used_count: 1 });
    // One use: the second found it held by the first; it says "again in 1 s", and then gets the first's answer.
    const [won, held] = c.status === 201 ? [c, d] : [d, c];
    expect(won.status).toBe(201);
    expect(held.status).toBe(409);
    expect(held.body.error.details).toEqual([{ field: 'invitation', issue: 'uses_in_progress' }]);
    expect(held.headers.get('retry-after')).toBe('1');
    const retried = await bookWith(one.credential, keyOne, later(7));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.data.id).toBe(won.body.data.id);
    expect(bookingsOf(one.id)).toHaveLength(1);
    expect(await read(one.id)).toMatchObject({ used_count: 1, status: 'exhausted' });
  });

  it('after a lost answer (504) the retry with the same token gets the Booking that was made, not a second one', async () => {
    const key = token();
    sys.booking.next('commit_then_hang');
    const lost = await bookPublicWith(key, later(8), 'lost@example.com');
    expect(lost.status).toBe(504);
    const retried = await bookPublicWith(key, later(8), 'lost@example.com');
    expect(retried.status).toBe(201);
    const made = sys.booking.created.filter((x) => x.body.guest.email === 'lost@example.com');
    expect(made).toHaveLength(1);
    expect(retried.body.data.id).toBe(made[0]!.bookingId);
  });

  it('does not keep a 4xx it says to retry, but keeps a final one: a taken slot is answered again for that token', async () => {
    const { credential } = await invite({ max_uses: 2 });
    const key = token();
    const taken = await bookWith(credential, key, slot(0)); // booked by an earlier test
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('slot_unavailable');
    const again = await bookWith(credential, key, slot(0));
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a malformed token with 400 naming Idempotency-Key', async () => {
    const { credential } = await invite();
    const res = await bookWith(credential, 'x'.repeat(256), later(9));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'Idempotency-Key', issue: 'too_long' }]);
  });
});

describe('public Event Type pages', () => {
  it('shows and books a public Event Type by workspace and Event Type slug, with source booking_page and no invitation', async () => {
    const info = await page('GET', `/public/${ws.slug}/office-hours`, null);
    expect(info.status).toBe(200);
    expect(info.body.data).toMatchObject({ kind: 'public', status: 'active', event_type: { name: 'Open office hours' } });
    const day = dayOf(slotDay);
    const slots = await page('GET', `/public/${ws.slug}/office-hours/slots?from=${day}&to=${day}&timezone=Asia/Tokyo`, null);
    expect(slots.status).toBe(200);
    expect(slots.body.data.slots.length).toBeGreaterThan(0);
    const res = await page('POST', `/public/${ws.slug}/office-hours/bookings`, null, { start_at: slot(4).toISOString(), guest: guest('anyone@example.com') });
    expect(res.status).toBe(201);
    const sent = sys.booking.created.find((b) => b.bookingId === res.body.data.id)!;
    expect(sent.body).toMatchObject({ source: 'booking_page', invitation_id: null, event_type_id: publicEvt });
    expect(sent.workspaceId).toBe(ws.id);
  });

  it('answers 404 for an invitation-only Event Type, an unknown Event Type and an unknown workspace', async () => {
    expect((await page('GET', `/public/${ws.slug}/consult`, null)).status).toBe(404);
    expect((await page('POST', `/public/${ws.slug}/consult/bookings`, null, { start_at: slot(4).toISOString(), guest: guest() })).status).toBe(404);
    expect((await page('GET', `/public/${ws.slug}/nothing`, null)).status).toBe(404);
    expect((await page('GET', '/public/no-such-workspace/office-hours', null)).status).toBe(404);
    const html = await call(sys.gateway.url, 'GET', `/book/${ws.slug}/consult`);
    expect(html.status).toBe(404);
    expect((await call(sys.gateway.url, 'GET', `/book/${ws.slug}/office-hours`)).status).toBe(200);
  });

  it('validates the booking body strictly', async () => {
    const res = await page('POST', `/public/${ws.slug}/office-hours/bookings`, null, { start_at: 'tomorrow', guest: { name: '', email: 'x', timezone: 'UTC' }, metadata: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'start_at', issue: 'invalid_format' },
        { field: 'guest.name', issue: 'too_short' },
        { field: 'guest.email', issue: 'invalid_format' },
        { field: 'metadata', issue: 'unknown_field' },
      ]),
    );
  });
});

describe('secrets in logs', () => {
  it('never writes a credential into the gateway or invitation logs', async () => {
    const { credential } = await invite({ max_uses: 2 });
    await call(sys.gateway.url, 'GET', `/book/i/${credential}`);
    await page('GET', '/invitation', credential);
    await book(credential, slot(11));
    const logs = [...sys.gateway.logs, ...sys.serviceLogs].join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(credential);
  });
});

function bookingCreated(workspaceId: string, b: { id: string; start_at: string; guest: ReturnType<typeof guest> }, invitationId: string | null) {
  const end = new Date(new Date(b.start_at).getTime() + 30 * 60_000).toISOString();
  return makeEvent('booking.created', {
    workspaceId,
    data: {
      booking: makeBooking({
        id: b.id,
        source: invitationId ? 'booking_page' : 'api',
        event_type_id: evt,
        host_id: 'hst_hostxxxxxxxxxxxxxxxxxx',
        start_at: b.start_at,
        end_at: end,
        guest: b.guest,
        created_at: new Date().toISOString(),
      }),
      internal: { blocked_from: b.start_at, blocked_to: end, invitation_id: invitationId },
    },
  });
}
