import { settle, waitFor } from '@sched/testing';
import { startSystem, type System } from '../support/system';
import { freeStarts, setUpTenant, startReceiver, type Tenant } from '../support/tenant';

let sys: System;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let t: Tenant;

beforeAll(async () => {
  sys = await startSystem({ env: { CALENDAR_WRITE_RETRY_DELAYS_MS: '200,500,1000', WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,1000,1000,1000,1000' } });
  receiver = await startReceiver();
  t = await setUpTenant(sys, receiver);
}, 240000);

afterAll(async () => {
  await receiver?.close();
  await sys?.stop();
});

const webhooks = (bookingId: string, type: string) => receiver.received.filter((w) => w.bookingId === bookingId && w.type === type);
const eventFile = async (bookingId: string) => (await sys.radicale.listObjects(t.calendarUser, t.calendarName)).filter((f) => f.includes(bookingId));

describe('a Booking through its whole life, with every service as its own process', () => {
  it('create → webhook → calendar synced → reschedule → cancel, through the TypeScript client', async () => {
    const [first, second] = await freeStarts(t, 40).then((s) => [s[0]!, s[30]!] as const);
    const created = await t.client.bookings.create({
      event_type_id: t.eventTypeId,
      start_at: first,
      guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
      metadata: { order: 'A-1', nested: { z: 1, a: 2 } },
    });
    expect(created).toMatchObject({ status: 'confirmed', version: 1, source: 'api', calendar: { status: 'pending', error_code: null }, meeting: { type: 'video', join_url: null } });
    expect(created.metadata).toEqual({ order: 'A-1', nested: { z: 1, a: 2 } });

    // The webhook and the calendar follow the committed state.
    await waitFor(() => webhooks(created.id, 'booking.created').length === 1, { timeoutMs: 20000 });
    const synced = await waitFor(async () => {
      const b = await t.client.bookings.get(created.id);
      return b.calendar.status === 'synced' ? b : null;
    }, { timeoutMs: 30000, intervalMs: 200 });
    expect(synced.meeting.join_url).toBe(`https://meet.example.com/${created.id}`);
    expect(await eventFile(created.id)).toHaveLength(1);
    await waitFor(() => webhooks(created.id, 'calendar.created').length === 1, { timeoutMs: 20000 });
    expect(webhooks(created.id, 'calendar.created')[0]!.calendarStatus).toBe('synced');

    // The slot is gone from the Slots query.
    expect(await freeStarts(t, 1)).not.toContain(first);

    const moved = await t.client.bookings.reschedule(created.id, { start_at: second, expected_version: 1 });
    expect(moved).toMatchObject({ version: 2, start_at: second, calendar: { status: 'pending' } });
    expect(moved.rescheduled_at).toEqual(expect.any(String));
    await waitFor(() => webhooks(created.id, 'booking.rescheduled').length === 1, { timeoutMs: 20000 });
    await waitFor(async () => (await t.client.bookings.get(created.id)).calendar.status === 'synced', { timeoutMs: 30000, intervalMs: 200 });
    const ics = await sys.radicale.getObject(t.calendarUser, t.calendarName, (await eventFile(created.id))[0]!);
    expect(ics).toContain(`DTSTART:${second.replace(/[-:]/g, '').replace('.000', '')}`);

    const cancelled = await t.client.bookings.cancel(created.id, { expected_version: 2 });
    expect(cancelled).toMatchObject({ status: 'cancelled', version: 3 });
    await waitFor(() => webhooks(created.id, 'booking.cancelled').length === 1, { timeoutMs: 20000 });
    await waitFor(async () => (await eventFile(created.id)).length === 0, { timeoutMs: 30000, intervalMs: 200 });
    await expect(t.client.bookings.reschedule(created.id, { start_at: first, expected_version: 3 })).rejects.toMatchObject({ code: 'booking_cancelled', status: 409 });
  });

  it('with a second replica of booking, calendar-sync and webhook-dispatch: one calendar event per Booking, each webhook-id once', async () => {
    await sys.addReplica('booking');
    await sys.addReplica('calendar-sync');
    await sys.addReplica('webhook-dispatch');
    const starts = await freeStarts(t, 60);
    const picks = starts.filter((_, i) => i % 3 === 0).slice(0, 15);
    const bookings = await Promise.all(
      picks.map((start_at, i) =>
        t.client.bookings.create({ event_type_id: t.eventTypeId, start_at, guest: { name: `Guest ${i}`, email: `g${i}@example.com`, timezone: 'UTC' } }),
      ),
    );
    for (const b of bookings) {
      await waitFor(async () => (await t.client.bookings.get(b.id)).calendar.status === 'synced', { timeoutMs: 60000, intervalMs: 250 });
      await waitFor(() => webhooks(b.id, 'booking.created').length >= 1 && webhooks(b.id, 'calendar.created').length >= 1, { timeoutMs: 30000 });
    }
    await settle(2000, 'a late duplicate (a second replica redoing a calendar write or a send) has no event of its own that says it will not come: let one arrive before counting');
    for (const b of bookings) {
      expect(await eventFile(b.id)).toHaveLength(1);
      expect(webhooks(b.id, 'booking.created')).toHaveLength(1);
      expect(webhooks(b.id, 'calendar.created')).toHaveLength(1);
    }
    const ids = receiver.received.map((w) => w.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
