import { createDb, type Db } from '@sched/db';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import type { BookingRecord } from '../src/domain/booking';
import { findBooking, findBookingForUpdate, listBookings } from '../src/store/booking.queries';
import { calendarResultUnitOfWork } from '../src/store/calendar-result.queries';
import { bookings } from '../src/store/schema';

/**
 * The store maps a Booking row to the domain's BookingRecord in one place (booking.queries.ts,
 * toBookingRecord): drizzle's select gives it Dates, the calendar result's raw locking read gives it the same
 * columns under drizzle's property names with timestamptz as text. Both reads of one row must give the same
 * record, every field filled (nullable ones too), so an alias missing or misspelt in the raw SELECT shows here.
 */
let tdb: TestDatabase;
let db: Db;
beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['booking'] });
  db = createDb(tdb.adminPool);
});
afterAll(async () => {
  await tdb.drop();
});

const at = (iso: string) => new Date(iso);
const full: BookingRecord = {
  id: 'bkg_AAAAAAAAAAAAAAAAAAAAAA',
  workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA',
  status: 'cancelled',
  version: 3,
  source: 'booking_page',
  invitationId: 'biv_AAAAAAAAAAAAAAAAAAAAAA',
  eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
  hostId: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
  startAt: at('2031-02-01T09:00:00.000Z'),
  endAt: at('2031-02-01T09:30:00.000Z'),
  blockedFrom: at('2031-02-01T08:50:00.000Z'),
  blockedTo: at('2031-02-01T09:40:00.000Z'),
  guest: { name: 'Ada', email: 'ada@example.com', timezone: 'Europe/Berlin' },
  meetingType: 'video',
  joinUrl: 'https://meet.example.com/x',
  calendarStatus: 'failed',
  calendarErrorCode: 'auth_failed',
  calendarWrittenAt: at('2031-01-01T12:00:01.001Z'),
  metadata: { z: 1, a: [2, { b: 'c' }] },
  createdAt: at('2031-01-01T12:00:00.123Z'),
  rescheduledAt: at('2031-01-02T08:00:00.456Z'),
  cancelledAt: at('2031-01-03T07:00:00.789Z'),
};
const bare: BookingRecord = {
  ...full,
  id: 'bkg_BBBBBBBBBBBBBBBBBBBBBB',
  status: 'confirmed',
  version: 1,
  source: 'api',
  invitationId: null,
  meetingType: 'phone',
  joinUrl: null,
  calendarStatus: 'pending',
  calendarErrorCode: null,
  calendarWrittenAt: null,
  metadata: {},
  rescheduledAt: null,
  cancelledAt: null,
};

async function insert(b: BookingRecord): Promise<void> {
  const { guest, ...rest } = b;
  await db.insert(bookings).values({ ...rest, guestName: guest.name, guestEmail: guest.email, guestTimezone: guest.timezone });
}

it.each([
  ['every field filled', full],
  ['every nullable field null', bare],
])('the raw locking read and drizzle’s reads map one row to the same BookingRecord (%s)', async (_, b) => {
  await insert(b);
  const [raw, locked] = await db.transaction(async (tx) => [await calendarResultUnitOfWork(tx).findForUpdate(b.workspaceId, b.id), await findBookingForUpdate(tx, b.workspaceId, b.id)]);
  expect(raw).toEqual(b);
  expect(locked).toEqual(b);
  expect(await findBooking(db, b.workspaceId, b.id)).toEqual(b);
  expect(raw!.startAt).toBeInstanceOf(Date);
  expect(Object.keys(raw!).sort()).toEqual(Object.keys(b).sort());
});

it('a missing row is null on the raw read too', async () => {
  await expect(db.transaction((tx) => calendarResultUnitOfWork(tx).findForUpdate(full.workspaceId, 'bkg_missing'))).resolves.toBeNull();
  expect((await listBookings(db, { workspaceId: full.workspaceId, limit: 10 })).map((r) => r.id)).toEqual([full.id, bare.id].sort());
});
