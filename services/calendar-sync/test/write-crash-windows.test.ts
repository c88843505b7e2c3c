// The booking.* write path's crash windows and races, through the running service against real
// Postgres, RabbitMQ and Radicale (store/message-transaction.ts; docs/calendar-sync.md, "Event writes").
import ICAL from 'ical.js';
import { newId, toTimestamp, type Booking } from '@sched/contracts';
import { makeBooking, waitFor, type TestDatabase, type TestRadicale } from '@sched/testing';
import type { CalendarAccess, CalendarProvider, OutgoingEvent } from '../src/domain/calendar-provider';
import { CalDavProvider } from '../src/providers/caldav/caldav-provider';
import { at, outboxEvents, rescheduled, type RunningCalendarSync } from './support/harness';
import { startCalDavRig, type CalDavRig } from './support/caldav-rig';

const PASSWORD = 'alice-password-crash';
const RETRY_DELAYS = [200, 400];

let rig: CalDavRig;
let db: TestDatabase;
let radicale: TestRadicale;
let svc: RunningCalendarSync;
let publisher: CalDavRig['publisher'];
const ws = newId('wsp');
const connectedHost = (calendar: string) => rig.connectedHost(calendar);

const caldav = new CalDavProvider({ timeoutMs: 3000, mode: 'local' });
/** Runs after the calendar write of these Booking ids, before the handler records it. */
const afterWrite = new Map<string, () => Promise<void>>();
const puts: string[] = [];
const provider: CalendarProvider = {
  verify: (input) => caldav.verify(input),
  changeMarker: (access) => caldav.changeMarker(access),
  listEvents: (access, window) => caldav.listEvents(access, window),
  deleteEvent: (access, url) => caldav.deleteEvent(access, url),
  async putEvent(access: CalendarAccess, event: OutgoingEvent) {
    const written = await caldav.putEvent(access, event);
    puts.push(event.objectName);
    const hook = [...afterWrite].find(([bookingId]) => event.objectName.startsWith(bookingId))?.[1];
    if (hook) await hook();
    return written;
  },
};

async function results(booking: Booking) {
  return (await outboxEvents(db)).filter((e) => (e.type === 'calendar.synced' || e.type === 'calendar.sync_failed') && e.data.booking_id === booking.id);
}

function startOf(ics: string): string {
  const vevent = new ICAL.Component(ICAL.parse(ics) as unknown[]).getFirstSubcomponent('vevent')!;
  return new ICAL.Event(vevent).startDate.toJSDate().toISOString();
}

beforeAll(async () => {
  rig = await startCalDavRig({ ws, password: PASSWORD, retryDelays: RETRY_DELAYS, setup: { provider } });
  ({ db, radicale, svc, publisher } = rig);
});

afterAll(async () => {
  try {
    await rig?.close();
  } finally {
    caldav.close();
  }
});

describe('booking.* writes: crash windows', () => {
  it('loses nothing when the database connection dies after the calendar write and before the commit: the retry writes the same object once and reports once', async () => {
    const host = await connectedHost('lost-commit');
    const booking = makeBooking({ host_id: host, start_at: toTimestamp(at(3, 9)), meeting: { type: 'phone', join_url: null } });
    let killed = 0;
    afterWrite.set(booking.id, async () => {
      if (killed > 0) return;
      // The message's transaction is the one idle in a transaction, holding the sync record's lock.
      const res = await db.adminPool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND usename = 'svc_calendar_sync' AND state = 'idle in transaction'`,
        [db.name],
      );
      killed = res.rowCount ?? 0;
    });
    const id = await publisher.publish('booking.created', ws, booking);
    const [result] = await waitFor(async () => {
      const found = await results(booking);
      return found.length > 0 ? found : null;
    });
    expect(killed).toBe(1);
    expect(result).toMatchObject({ type: 'calendar.synced', data: { booking_id: booking.id, booking_version: 1, status: 'synced' } });
    expect(puts.filter((p) => p.startsWith(booking.id))).toHaveLength(2); // written again by the retry (412, then a plain PUT)
    expect(await radicale.listObjects('alice', 'lost-commit')).toEqual([`${booking.id}.ics`]);
    expect((await db.adminPool.query('SELECT 1 FROM calendar_sync.inbox WHERE event_id = $1', [id])).rowCount).toBe(1);
    expect((await db.adminPool.query('SELECT written_version, status FROM calendar_sync.booking_syncs WHERE booking_id = $1', [booking.id])).rows).toEqual([{ written_version: 1, status: 'synced' }]);
    expect(svc.logs.some((l) => l.includes('calendar event written') && l.includes(booking.id) && l.includes('"attempt":2'))).toBe(true);
    // Nothing else comes later.
    await new Promise((r) => setTimeout(r, RETRY_DELAYS.reduce((a, b) => a + b, 0)));
    expect(await results(booking)).toHaveLength(1);
  });

  it('writes a create and its reschedule arriving together one after the other (the record lock): the calendar ends at the newest version', async () => {
    const host = await connectedHost('race');
    const v1 = makeBooking({ host_id: host, start_at: toTimestamp(at(4, 9)), meeting: { type: 'phone', join_url: null } });
    const v2 = rescheduled(v1, at(5, 15));
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => (releaseFirst = r));
    let writes = 0;
    afterWrite.set(v1.id, async () => {
      writes += 1;
      if (writes === 1) await firstHeld; // the first write is slow: the second message arrives meanwhile
    });
    await publisher.publish('booking.created', ws, v1);
    await waitFor(() => writes === 1);
    await publisher.publish('booking.rescheduled', ws, v2);
    // The second message waits for the first one's row lock, so it has written nothing yet.
    await waitFor(async () => (await db.adminPool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, [db.name])).rowCount === 1);
    expect(writes).toBe(1);
    releaseFirst();
    await waitFor(async () => (await results(v1)).some((e) => e.data.booking_version === 2));
    expect(writes).toBe(2);
    expect(startOf((await radicale.getObject('alice', 'race', `${v1.id}.ics`))!)).toBe(v2.start_at);
    expect((await db.adminPool.query('SELECT written_version FROM calendar_sync.booking_syncs WHERE booking_id = $1', [v1.id])).rows[0].written_version).toBe(2);
  });
});
