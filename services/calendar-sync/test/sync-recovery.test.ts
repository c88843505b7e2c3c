import { newId, toTimestamp, type Booking } from '@sched/contracts';
import { inspectDeadLetters } from '@sched/messaging';
import { makeBooking, waitFor, type TestDatabase, type TestRadicale } from '@sched/testing';
import { at, call, cancelled, outboxEvents, type RunningCalendarSync } from './support/harness';
import { startCalDavRig, type CalDavRig } from './support/caldav-rig';

const PASSWORD = 'alice-password-recovery';
const RETRY_DELAYS = [100, 150];

let rig: CalDavRig;
let db: TestDatabase;
let radicale: TestRadicale;
let svc: RunningCalendarSync;
let publisher: CalDavRig['publisher'];
const ws = newId('wsp');
const connectedHost = (calendar: string) => rig.connectedHost(calendar);

const resyncPath = (bookingId: string, workspace = ws) => `/admin/v1/workspaces/${workspace}/bookings/${bookingId}/calendar-resync`;

async function results(booking: Booking) {
  return (await outboxEvents(db)).filter((e) => e.type.startsWith('calendar.sync') && e.data.booking_id === booking.id);
}

async function resultFor(booking: Booking, type: string) {
  return waitFor(async () => (await results(booking)).find((e) => e.type === type && e.data.booking_version === booking.version) ?? null, { timeoutMs: 10_000 });
}

beforeAll(async () => {
  rig = await startCalDavRig({ ws, password: PASSWORD, retryDelays: RETRY_DELAYS, env: { PROVIDER_TIMEOUT_MS: '1000' } });
  ({ db, radicale, svc, publisher } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe('bounded retries and recovery', () => {
  it('reports calendar.sync_failed provider_unavailable after the retry bound (no dead letter), and a resync writes it once Radicale is back', async () => {
    const host = await connectedHost('main');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(3, 9)) });
    const logsBefore = svc.logs.length;
    await radicale.stop();
    try {
      await publisher.publish('booking.created', ws, booking);
      const failed = await resultFor(booking, 'calendar.sync_failed');
      expect(failed.data).toEqual({ booking_id: booking.id, booking_version: 1, error_code: 'provider_unavailable' });
      // First attempt plus one retry per configured delay, then the failure was recorded instead of dead-lettered.
      expect(svc.logs.slice(logsBefore).filter((l) => l.includes('event handler failed; retrying later'))).toHaveLength(RETRY_DELAYS.length);
      expect((await inspectDeadLetters(svc.service.broker, 'calendar-sync')).count).toBe(0);
      expect(await results(booking)).toHaveLength(1);

      // A resync while the provider is still down: one attempt, answered as failed.
      const stillDown = await call(svc.url, 'POST', resyncPath(booking.id));
      expect(stillDown.status).toBe(200);
      expect(stillDown.body.data).toMatchObject({ booking_id: booking.id, status: 'failed', error_code: 'provider_unavailable', synced_version: null });
    } finally {
      await radicale.start();
    }

    const res = await call(svc.url, 'POST', resyncPath(booking.id));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      booking_id: booking.id,
      booking_version: 1,
      status: 'synced',
      error_code: null,
      synced_version: 1,
      event_uid: `${booking.id}@scheduling-service`,
      join_url: `https://meet.example.com/${booking.id}`,
      updated_at: expect.any(String),
    });
    const synced = await resultFor(booking, 'calendar.synced');
    expect(synced.data).toMatchObject({ booking_version: 1, status: 'synced', join_url: `https://meet.example.com/${booking.id}` });
    expect(await radicale.listObjects('alice', 'main')).toEqual([`${booking.id}.ics`]);
  });

  it('resyncs a failed cancel by deleting the event', async () => {
    const host = await connectedHost('cancel');
    const v1 = makeBooking({ host_id: host, start_at: toTimestamp(at(4, 9)) });
    await publisher.publish('booking.created', ws, v1);
    await resultFor(v1, 'calendar.synced');
    const v2 = cancelled(v1);
    await radicale.stop();
    try {
      await publisher.publish('booking.cancelled', ws, v2);
      expect((await resultFor(v2, 'calendar.sync_failed')).data.error_code).toBe('provider_unavailable');
    } finally {
      await radicale.start();
    }
    expect(await radicale.listObjects('alice', 'cancel')).toEqual([`${v1.id}.ics`]);
    const res = await call(svc.url, 'POST', resyncPath(v1.id));
    expect(res.body.data).toMatchObject({ booking_version: 2, status: 'synced', synced_version: 2 });
    expect(await radicale.listObjects('alice', 'cancel')).toEqual([]);
  });

  it('answers a resync of an already synced Booking with its state and writes nothing; unknown or foreign Booking → 404', async () => {
    const host = await connectedHost('noop');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(5, 9)) });
    await publisher.publish('booking.created', ws, booking);
    await resultFor(booking, 'calendar.synced');
    const before = (await results(booking)).map((e) => e.id);
    const res = await call(svc.url, 'POST', resyncPath(booking.id));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'synced', synced_version: 1 });
    expect((await results(booking)).map((e) => e.id)).toEqual(before);

    expect((await call(svc.url, 'POST', resyncPath(newId('bkg')))).status).toBe(404);
    expect((await call(svc.url, 'POST', resyncPath(booking.id, newId('wsp')))).status).toBe(404);
    expect((await call(svc.url, 'POST', resyncPath('bkg_nope'))).status).toBe(404);
  });
});
