import ICAL from 'ical.js';
import { newId, toTimestamp, type Booking } from '@sched/contracts';
import { makeBooking, waitFor, type TestDatabase, type TestRadicale } from '@sched/testing';
import { at, cancelled, call, changesHeard, outboxEvents, rescheduled, type RunningCalendarSync } from './support/harness';
import { startCalDavRig, type CalDavRig } from './support/caldav-rig';

const PASSWORD = 'alice-password-writes';
// Slow enough that Radicale can be restarted before the last attempt, fast enough for a test.
const RETRY_DELAYS = [300, 600, 1200, 2400];

let rig: CalDavRig;
let db: TestDatabase;
let radicale: TestRadicale;
let svc: RunningCalendarSync;
let publisher: CalDavRig['publisher'];
const ws = newId('wsp');
const connectedHost = (calendar: string) => rig.connectedHost(calendar);

async function syncResults(bookingId: string) {
  const rows = await outboxEvents(db);
  return rows.filter((e) => (e.type === 'calendar.synced' || e.type === 'calendar.sync_failed') && e.data.booking_id === bookingId);
}

/** Waits for the sync result of this Booking version and returns it. */
async function resultFor(booking: Booking, timeoutMs = 10_000) {
  return waitFor(async () => (await syncResults(booking.id)).find((e) => e.data.booking_version === booking.version) ?? null, { timeoutMs });
}

function parseEvent(ics: string) {
  const comp = new ICAL.Component(ICAL.parse(ics) as unknown[]);
  const vevents = comp.getAllSubcomponents('vevent');
  expect(vevents).toHaveLength(1);
  const ev = new ICAL.Event(vevents[0]);
  return {
    uid: ev.uid,
    summary: ev.summary,
    description: ev.description,
    location: ev.location,
    url: vevents[0]!.getFirstPropertyValue('url'),
    start: ev.startDate.toJSDate().toISOString(),
    end: ev.endDate.toJSDate().toISOString(),
    sequence: ev.sequence,
  };
}

beforeAll(async () => {
  rig = await startCalDavRig({ ws, password: PASSWORD, retryDelays: RETRY_DELAYS });
  ({ db, radicale, svc, publisher } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe('calendar events of Bookings', () => {
  it('writes the event on booking.created (UID, summary, times, join URL), moves it on reschedule and deletes it on cancel', async () => {
    const host = await connectedHost('life');
    const v1 = makeBooking({ host_id: host, start_at: toTimestamp(at(3, 9)) });
    await publisher.publish('booking.created', ws, v1);
    const created = await resultFor(v1);
    const joinUrl = `https://meet.example.com/${v1.id}`;
    expect(created).toMatchObject({
      type: 'calendar.synced',
      workspace_id: ws,
      data: { booking_id: v1.id, booking_version: 1, status: 'synced', join_url: joinUrl, event_uid: `${v1.id}@scheduling-service` },
    });
    const written = parseEvent((await radicale.getObject('alice', 'life', `${v1.id}.ics`))!);
    expect(written).toMatchObject({
      uid: `${v1.id}@scheduling-service`,
      summary: 'Video call with Ada Lovelace',
      start: v1.start_at,
      end: v1.end_at,
      url: joinUrl,
      location: joinUrl,
      sequence: 1,
    });
    expect(written.description).toContain(joinUrl);

    const v2 = rescheduled(v1, at(4, 14));
    await publisher.publish('booking.rescheduled', ws, v2);
    expect((await resultFor(v2)).data).toMatchObject({ booking_version: 2, status: 'synced', join_url: joinUrl });
    const moved = parseEvent((await radicale.getObject('alice', 'life', `${v1.id}.ics`))!);
    expect(moved).toMatchObject({ uid: `${v1.id}@scheduling-service`, start: v2.start_at, end: v2.end_at, sequence: 2, url: joinUrl });
    expect(await radicale.listObjects('alice', 'life')).toEqual([`${v1.id}.ics`]);

    const v3 = cancelled(v2);
    await publisher.publish('booking.cancelled', ws, v3);
    expect((await resultFor(v3)).data).toMatchObject({ booking_version: 3, status: 'synced' });
    expect(await radicale.getObject('alice', 'life', `${v1.id}.ics`)).toBeNull();

    // The relay published every result (publisher confirm received).
    await waitFor(async () => (await syncResults(v1.id)).every((e) => e.published));
  });

  it('writes no join URL for a non-video meeting', async () => {
    const host = await connectedHost('phone');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(3, 11)), meeting: { type: 'phone', join_url: null } });
    await publisher.publish('booking.created', ws, booking);
    expect((await resultFor(booking)).data.join_url).toBeNull();
    const ev = parseEvent((await radicale.getObject('alice', 'phone', `${booking.id}.ics`))!);
    expect(ev.url).toBeNull();
    expect(ev.summary).toBe('Phone call with Ada Lovelace');
  });

  it('gives one event and one result when the same booking.created arrives twice (same and new message id)', async () => {
    const host = await connectedHost('dupes');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(5, 9)) });
    const logsBefore = svc.logs.length;
    const id = await publisher.publish('booking.created', ws, booking);
    await publisher.publish('booking.created', ws, booking, id); // redelivery of the same message
    const again = await publisher.publish('booking.created', ws, booking); // the same change published twice
    await resultFor(booking);
    // All three deliveries handled: both ids in the inbox, and the repeated id skipped by it.
    await waitFor(async () => (await db.adminPool.query('SELECT 1 FROM calendar_sync.inbox WHERE event_id = ANY($1)', [[id, again]])).rowCount === 2);
    await waitFor(() => svc.logs.slice(logsBefore).some((l) => l.includes('duplicate event skipped')));
    expect(await radicale.listObjects('alice', 'dupes')).toEqual([`${booking.id}.ics`]);
    expect(await syncResults(booking.id)).toHaveLength(1);
  });

  it('turns a create whose object already exists (crash after the write, before the commit) into an update, not a second event', async () => {
    const host = await connectedHost('crash');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(6, 9)) });
    // As if a previous attempt wrote the object and died before recording it.
    await radicale.putObject('alice', 'crash', `${booking.id}.ics`, 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//EN\r\nBEGIN:VEVENT\r\nUID:' +
      `${booking.id}@scheduling-service\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T000000Z\r\nDTEND:20260101T003000Z\r\nSUMMARY:half-written\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`);
    await publisher.publish('booking.created', ws, booking);
    expect((await resultFor(booking)).type).toBe('calendar.synced');
    expect(await radicale.listObjects('alice', 'crash')).toEqual([`${booking.id}.ics`]);
    expect(parseEvent((await radicale.getObject('alice', 'crash', `${booking.id}.ics`))!)).toMatchObject({ start: booking.start_at, summary: 'Video call with Ada Lovelace' });
  });

  it('ignores stale messages: a late booking.created after the cancel writes nothing', async () => {
    const host = await connectedHost('stale');
    const v1 = makeBooking({ host_id: host, start_at: toTimestamp(at(7, 9)) });
    const v2 = cancelled(v1);
    // The cancel arrives first: nothing was written yet, so the calendar already matches (synced, no event).
    await publisher.publish('booking.cancelled', ws, v2);
    expect((await resultFor(v2)).type).toBe('calendar.synced');
    const late = await publisher.publish('booking.created', ws, v1);
    await waitFor(async () => (await db.adminPool.query('SELECT 1 FROM calendar_sync.inbox WHERE event_id = $1', [late])).rowCount === 1);
    expect(await radicale.listObjects('alice', 'stale')).toEqual([]);
    expect((await syncResults(v1.id)).map((e) => e.data.booking_version)).toEqual([2]);
  });

  it('with Radicale down: no result while it is down, then calendar.synced once it is back (within the retry bound)', async () => {
    const host = await connectedHost('outage');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(8, 9)) });
    await radicale.stop();
    const logsBefore = svc.logs.length;
    try {
      await publisher.publish('booking.created', ws, booking);
      // At least the first attempt and the first retry fail while it is down.
      await waitFor(() => svc.logs.slice(logsBefore).filter((l) => l.includes('event handler failed; retrying later')).length >= 2, { timeoutMs: 5000 });
      expect(await syncResults(booking.id)).toEqual([]);
    } finally {
      await radicale.start();
    }
    const result = await resultFor(booking, 8000);
    expect(result.type).toBe('calendar.synced');
    expect(await radicale.listObjects('alice', 'outage')).toEqual([`${booking.id}.ics`]);
    const record = await db.adminPool.query('SELECT status, written_version FROM calendar_sync.booking_syncs WHERE booking_id = $1', [booking.id]);
    expect(record.rows[0]).toEqual({ status: 'synced', written_version: 1 });
  });

  it('fails at once with auth_failed (no retries) when the credentials are refused, and marks the connection broken', async () => {
    const host = await connectedHost('refused');
    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET username = 'mallory' WHERE host_id = $1`, [host]);
    await changesHeard(svc, db);
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(9, 9)) });
    await publisher.publish('booking.created', ws, booking);
    const result = await resultFor(booking);
    expect(result).toMatchObject({ type: 'calendar.sync_failed', data: { booking_id: booking.id, booking_version: 1, error_code: 'auth_failed' } });
    const updates = (await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === host).map((e) => e.data.status);
    expect(updates).toEqual(['connected', 'error']);
  });

  it('fails with calendar_not_found when the host has no calendar connection any more', async () => {
    const host = await connectedHost('gone');
    expect((await call(svc.url, 'DELETE', `/admin/v1/workspaces/${ws}/hosts/${host}/calendar`)).status).toBe(204);
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(9, 11)) });
    await publisher.publish('booking.created', ws, booking);
    expect((await resultFor(booking)).data).toEqual({ booking_id: booking.id, booking_version: 1, error_code: 'calendar_not_found' });
  });

  it('moves the event to the new calendar on the next write when the connection was pointed elsewhere', async () => {
    const host = await connectedHost('before');
    const v1 = makeBooking({ host_id: host, start_at: toTimestamp(at(11, 9)) });
    await publisher.publish('booking.created', ws, v1);
    await resultFor(v1);
    await radicale.makeCalendar('alice', 'after');
    const put = await call(svc.url, 'PUT', `/admin/v1/workspaces/${ws}/hosts/${host}/calendar`, {
      provider: 'caldav',
      url: radicale.url,
      username: 'alice',
      password: PASSWORD,
      calendar_url: `${radicale.url}/alice/after/`,
    });
    expect(put.status).toBe(200);
    const v2 = rescheduled(v1, at(12, 9));
    await publisher.publish('booking.rescheduled', ws, v2);
    await resultFor(v2);
    expect(await radicale.listObjects('alice', 'after')).toEqual([`${v1.id}.ics`]);
    expect(await radicale.listObjects('alice', 'before')).toEqual([]);
  });

  it('keeps the last Booking state in its sync record (what a resync re-runs)', async () => {
    const host = await connectedHost('record');
    const v1 = makeBooking({ host_id: host, start_at: toTimestamp(at(10, 9)) });
    await publisher.publish('booking.created', ws, v1);
    await resultFor(v1);
    const row = await db.adminPool.query('SELECT booking, booking_version, written_version, status, object_url, etag FROM calendar_sync.booking_syncs WHERE booking_id = $1', [v1.id]);
    expect(row.rows[0]).toMatchObject({ booking: v1, booking_version: 1, written_version: 1, status: 'synced', object_url: `${radicale.url}/alice/record/${v1.id}.ics` });
    expect(row.rows[0].etag).toEqual(expect.any(String));
    expect(toTimestamp(new Date(row.rows[0].booking.start_at))).toBe(v1.start_at);
  });

  it('never writes the calendar password into its logs while writing events', () => {
    const logs = svc.logs.join('');
    expect(logs).toContain('calendar event written');
    expect(logs).not.toContain(PASSWORD);
  });
});
