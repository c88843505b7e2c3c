import { makeEvent } from '@sched/contracts';
import { waitFor } from '@sched/testing';
import { bookable } from './support/availability-stub';
import { createBody, nextStart, startBookingHarness, type BookingHarness } from './support/booking-harness';
import { startEventTap, type EventTap } from './support/event-tap';

/**
 * calendar-sync reports calendar.synced / calendar.sync_failed for a Booking version; booking applies the
 * current version's result once and publishes the public calendar.created / calendar.failed. Real RabbitMQ:
 * results are published to the exchange, public events are counted on a test queue bound to it.
 */
let h: BookingHarness;
let tap: EventTap;
beforeAll(async () => {
  h = await startBookingHarness();
  await h.service.consumerReady();
  tap = await startEventTap(h.amqp, 'test.calendar-public', ['calendar.created', 'calendar.failed']);
});
afterAll(async () => {
  await tap.close();
  await h.close();
});

const synced = (workspaceId: string, bookingId: string, version: number, joinUrl: string | null = 'https://meet.example.com/x') =>
  makeEvent('calendar.synced', { workspaceId, data: { booking_id: bookingId, booking_version: version, status: 'synced', join_url: joinUrl, event_uid: `${bookingId}@sched` } });
const failed = (workspaceId: string, bookingId: string, version: number) =>
  makeEvent('calendar.sync_failed', { workspaceId, data: { booking_id: bookingId, booking_version: version, error_code: 'auth_failed' } });

async function book(meetingType = 'video') {
  h.stub.behave(bookable({ meetingType }));
  const res = await h.api('POST', '/v1/bookings', { json: createBody() });
  expect(res.status).toBe(201);
  return res.body.data;
}
const read = async (id: string) => (await h.api('GET', `/v1/bookings/${id}`)).body.data;
const publicEventsFor = (id: string) => tap.messages.filter((m) => m.body.data.booking.id === id);
/** The consumer's transaction is done when the inbox has the event. */
const handled = (eventId: string) =>
  waitFor(async () => (await h.db.adminPool.query('SELECT 1 FROM booking.inbox WHERE event_id = $1', [eventId])).rowCount === 1, { timeoutMs: 10_000 });

it('calendar.synced for a video Booking: calendar synced, join_url filled, version unchanged, one calendar.created with the Booking after it', async () => {
  const b = await book('video');
  const event = synced(h.main.workspaceId, b.id, 1, `https://meet.example.com/${b.id}`);
  await tap.publish(event);
  await handled(event.id);
  const after = await read(b.id);
  expect(after).toEqual({ ...b, meeting: { type: 'video', join_url: `https://meet.example.com/${b.id}` }, calendar: { status: 'synced', error_code: null } });
  await waitFor(() => publicEventsFor(b.id).length === 1, { timeoutMs: 10_000 });
  const [msg] = publicEventsFor(b.id);
  expect(msg!.routingKey).toBe('calendar.created');
  expect(msg!.body).toMatchObject({ type: 'calendar.created', workspace_id: h.main.workspaceId, data: { booking: after } });
});

it('calendar.synced for a phone Booking leaves join_url null', async () => {
  const b = await book('phone');
  const event = synced(h.main.workspaceId, b.id, 1, 'https://meet.example.com/ignored');
  await tap.publish(event);
  await handled(event.id);
  expect((await read(b.id)).meeting).toEqual({ type: 'phone', join_url: null });
  expect((await read(b.id)).calendar.status).toBe('synced');
});

it('ignores a stale result for an older version; the current version’s result applies, and calendar.created is published once', async () => {
  const b = await book();
  await h.api('POST', `/v1/bookings/${b.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } });
  const stale = synced(h.main.workspaceId, b.id, 1);
  await tap.publish(stale);
  await handled(stale.id);
  expect((await read(b.id)).calendar.status).toBe('pending');
  const staleFail = failed(h.main.workspaceId, b.id, 1);
  await tap.publish(staleFail);
  await handled(staleFail.id);
  expect((await read(b.id)).calendar).toEqual({ status: 'pending', error_code: null });

  const current = synced(h.main.workspaceId, b.id, 2);
  await tap.publish(current);
  await handled(current.id);
  expect(await read(b.id)).toMatchObject({ version: 2, calendar: { status: 'synced' } });
  await waitFor(() => publicEventsFor(b.id).length === 1, { timeoutMs: 10_000 });
  expect(publicEventsFor(b.id).map((m) => m.routingKey)).toEqual(['calendar.created']);
});

it('handles a duplicate result once: the same event redelivered, and a repeated result under a new id, publish nothing more', async () => {
  const b = await book();
  const event = synced(h.main.workspaceId, b.id, 1);
  await tap.publish(event);
  await tap.publish(event);
  await handled(event.id);
  const again = synced(h.main.workspaceId, b.id, 1);
  await tap.publish(again);
  await handled(again.id);
  // A later, different event for another Booking proves the relay had time to publish anything pending.
  const marker = await book();
  const markerEvent = synced(h.main.workspaceId, marker.id, 1);
  await tap.publish(markerEvent);
  await waitFor(() => publicEventsFor(marker.id).length === 1, { timeoutMs: 10_000 });
  expect(publicEventsFor(b.id)).toHaveLength(1);
  const { rows } = await h.db.adminPool.query(`SELECT count(*)::int AS n FROM booking.outbox WHERE type = 'calendar.created' AND payload->'data'->'booking'->>'id' = $1`, [b.id]);
  expect(rows[0].n).toBe(1);
});

it('calendar.sync_failed: calendar failed with its error_code, version unchanged, calendar.failed carries the Booking and the code', async () => {
  const b = await book();
  const event = failed(h.main.workspaceId, b.id, 1);
  await tap.publish(event);
  await handled(event.id);
  const after = await read(b.id);
  expect(after).toEqual({ ...b, calendar: { status: 'failed', error_code: 'auth_failed' } });
  await waitFor(() => publicEventsFor(b.id).length === 1, { timeoutMs: 10_000 });
  const [msg] = publicEventsFor(b.id);
  expect(msg!.routingKey).toBe('calendar.failed');
  expect(msg!.body.data).toEqual({ booking: after, error_code: 'auth_failed' });
});

it('reschedule and cancel set calendar.status back to pending; a later sync of the rescheduled time publishes no second calendar.created', async () => {
  const b = await book();
  const first = synced(h.main.workspaceId, b.id, 1);
  await tap.publish(first);
  await handled(first.id);
  const moved = await h.api('POST', `/v1/bookings/${b.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } });
  expect(moved.body.data.calendar).toEqual({ status: 'pending', error_code: null });
  expect(moved.body.data.meeting.join_url).toBe('https://meet.example.com/x');
  const second = synced(h.main.workspaceId, b.id, 2);
  await tap.publish(second);
  await handled(second.id);
  expect((await read(b.id)).calendar.status).toBe('synced');
  const cancelled = await h.api('POST', `/v1/bookings/${b.id}/cancel`);
  expect(cancelled.body.data.calendar.status).toBe('pending');
  const marker = await book();
  const markerEvent = synced(h.main.workspaceId, marker.id, 1);
  await tap.publish(markerEvent);
  await waitFor(() => publicEventsFor(marker.id).length === 1, { timeoutMs: 10_000 });
  expect(publicEventsFor(b.id).map((m) => m.routingKey)).toEqual(['calendar.created']);
});

it('ignores a result for a Booking of another workspace (the event’s workspace scopes the lookup)', async () => {
  const b = await book();
  const other = await h.newWorkspace();
  const event = synced(other.workspaceId, b.id, 1);
  await tap.publish(event);
  await handled(event.id);
  expect((await read(b.id)).calendar.status).toBe('pending');
});
