/**
 * The booked-interval projection's batch handler (events/booking-changed.handler.ts, handleBookingsChanged),
 * which the consumer gives the booking.* events waiting together: it must leave the rows that
 * handleBookingChanged of each leaves, whatever the order and mix of the batch, in one upsert.
 */
import type { Pool } from 'pg';
import { makeEvent, type Booking, type EventData } from '@sched/contracts';
import { createDb, createPool, type Db } from '@sched/db';
import type { EventEnvelope } from '@sched/messaging';
import { createTestDatabase, makeBooking, type TestDatabase } from '@sched/testing';
import { rng } from '../bench/fixture';
import { handleBookingChanged, handleBookingsChanged } from '../src/events/booking-changed.handler';
import type { StatementPool } from '../src/store/prepared';

const WS = 'wsp_batchhandler000000000000';
const EVT = 'evt_batchhandler000000000000';
const HOST = 'hst_batchhandler000000000000';

let tdb: TestDatabase;
let db: Db;
let admin: Pool;
let statements: Pool;

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['availability'] });
  db = createDb(tdb.pool('availability'));
  admin = tdb.adminPool;
  statements = createPool(tdb.urlFor('availability'), { max: 2, genericPlans: true, applicationName: 'test-statements', logger: { error: () => undefined } });
  // The Event Type whose buffers (15 before, 5 after) an event without data.internal falls back to.
  await admin.query(`INSERT INTO availability.hosts (id, workspace_id, name, email, timezone) VALUES ($1, $2, 'Host', 'h@example.com', 'UTC')`, [HOST, WS]);
  await admin.query(
    `INSERT INTO availability.event_types (id, workspace_id, host_id, name, slug, duration_minutes, slot_interval_minutes, buffer_before_minutes,
       buffer_after_minutes, minimum_notice_minutes, maximum_advance_minutes, meeting_type, status, access)
     VALUES ($1, $2, $3, 'Intro', 'intro', 30, 30, 15, 5, 0, 1000, 'video', 'active', 'public')`,
    [EVT, WS, HOST],
  );
});

afterAll(async () => {
  await statements?.end();
  await tdb?.drop();
});

const snapshot = async () =>
  (
    await admin.query(
      `SELECT booking_id, workspace_id, host_id, event_type_id, version, status, start_at, end_at, blocked_from, blocked_to FROM availability.booked_intervals ORDER BY booking_id`,
    )
  ).rows;

/** 300 events of 40 Bookings: created, rescheduled and cancelled, versions 1–4, half with data.internal. */
function events(seed: number): EventEnvelope[] {
  const random = rng(seed);
  const bookings = Array.from({ length: 40 }, (_, i) => makeBooking({ id: `bkg_batchhandler0000000${String(i).padStart(2, '0')}`, host_id: HOST, event_type_id: EVT }));
  return Array.from({ length: 300 }, () => {
    const base = bookings[Math.floor(random() * bookings.length)]!;
    const version = 1 + Math.floor(random() * 4);
    const start = Date.parse('2026-06-08T07:00:00Z') + Math.floor(random() * 32) * 15 * 60_000;
    const b: Booking = {
      ...base,
      version,
      status: version > 1 && random() < 0.3 ? 'cancelled' : 'confirmed',
      start_at: new Date(start).toISOString(),
      end_at: new Date(start + 30 * 60_000).toISOString(),
    };
    const type = version === 1 ? 'booking.created' : b.status === 'cancelled' ? 'booking.cancelled' : 'booking.rescheduled';
    const internal: EventData<'booking.created'>['internal'] = { blocked_from: new Date(start - 10 * 60_000).toISOString(), blocked_to: new Date(start + 40 * 60_000).toISOString(), invitation_id: null };
    return makeEvent(type, { workspaceId: WS, data: random() < 0.5 ? { booking: b, internal } : { booking: b } }) as EventEnvelope;
  });
}

test('batches of the same and different Bookings, versions out of order, with and without data.internal: the rows of the events applied one by one', async () => {
  for (const seed of [5, 6]) {
    const all = events(seed);
    await admin.query('DELETE FROM availability.booked_intervals');
    for (const e of all) await handleBookingChanged(e, db, statements);
    const expected = await snapshot();
    expect(expected.length).toBeGreaterThan(30);
    expect(expected.some((r) => r.blocked_from.getTime() === r.start_at.getTime() - 15 * 60_000)).toBe(true); // a fallback applied

    await admin.query('DELETE FROM availability.booked_intervals');
    const sent: string[] = [];
    const counting: StatementPool = {
      query: ((config: { name: string }, values?: unknown[]) => {
        sent.push(config.name);
        return statements.query(config as never, values as never);
      }) as StatementPool['query'],
    };
    const random = rng(seed + 50);
    let batches = 0;
    for (let i = 0; i < all.length; batches += 1) {
      const size = 2 + Math.floor(random() * 25);
      await handleBookingsChanged(all.slice(i, i + size), db, counting);
      i += size;
    }
    expect(await snapshot()).toEqual(expected);
    expect(sent).toHaveLength(batches); // one upsert per batch
  }
});

test('an event breaking the contract fails the whole batch and writes nothing of it (the consumer then runs each alone)', async () => {
  await admin.query('DELETE FROM availability.booked_intervals');
  const [good] = events(9);
  const bad = { ...good!, id: 'evt_broken', data: { booking: { id: 'bkg_broken' } } } as EventEnvelope;
  await expect(handleBookingsChanged([good!, bad], db, statements)).rejects.toThrow();
  expect(await snapshot()).toEqual([]);
});
