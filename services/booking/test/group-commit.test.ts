import { Client } from 'pg';
import type { BookingRecord } from '../src/domain/booking';
import { newBookingRecord } from '../src/domain/create-booking';
import { announcementEnvelope } from '../src/events/booking-events';
import { createBatchRow, createBookingBatcher, type CreateBatchRow } from '../src/store/create-batch.queries';
import { bookable } from './support/availability-stub';
import { createBody, nextStart, startBookingHarness, type BookingHarness } from './support/booking-harness';

/**
 * Group commit (docs/booking.md): booking.create_bookings (migration 0003) decides each item's answer in one
 * transaction for the batch. These tests call it with hand-made batches on real Postgres, then show through
 * the gateway that concurrent creates really share transactions.
 */
let h: BookingHarness;
beforeAll(async () => {
  h = await startBookingHarness({ stub: bookable() });
});
afterAll(async () => {
  await h.close();
});

/** The Booking a create makes (newBookingRecord, as the route does) for a bookable 30-minute slot at `start`. */
function record(start: string): BookingRecord {
  const end = new Date(new Date(start).getTime() + 30 * 60_000).toISOString();
  const input = { source: 'api' as const, invitationId: null, eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA', startAt: new Date(start), guest: { name: 'Ada', email: 'ada@example.com', timezone: 'UTC' }, metadata: { z: 1, a: 2 } };
  const check = { bookable: true as const, event_type_id: input.eventTypeId, host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA', start_at: start, end_at: end, blocked_from: start, blocked_to: end, meeting_type: 'video' as const };
  return newBookingRecord(h.main.workspaceId, input, check, new Date('2030-06-01T10:00:00.123Z'));
}

let keyCounter = 0;
function row(b: BookingRecord, keyed = true): CreateBatchRow {
  keyCounter += 1;
  return createBatchRow({
    booking: b,
    event: announcementEnvelope({ type: 'booking.created', booking: b, occurredAt: b.createdAt }),
    key: keyed ? { id: `key-${keyCounter}-${b.id}`, lockKey: String(900_000 + keyCounter), fingerprint: `fp-${b.id}`, retentionMs: 60_000 } : undefined,
    createdBody: JSON.stringify({ data: { id: b.id }, meta: { request_id: 'req_1' } }),
    conflictBody: JSON.stringify({ error: { code: 'slot_unavailable' }, meta: { request_id: 'req_1' } }),
  });
}

const batcher = () => createBookingBatcher({ pool: h.db.adminPool, outboxChannel: 'booking_outbox', maxInFlight: 1, maxBatch: 64 });

it('answers each item of one batch on its own: created, conflict with an earlier item, replay of a finished key, no key', async () => {
  const start = nextStart();
  const first = row(record(start));
  const overlapping = row(record(start));
  const unkeyed = row(record(nextStart()), false);
  // A key finished in an earlier transaction: its stored answer comes back, nothing new is written.
  const finished = row(record(nextStart()));
  const run = batcher();
  expect(await run.submit(finished)).toMatchObject({ outcome: 'created', status: 201 });
  const again = { ...row(record(nextStart())), key_id: finished.key_id, lock_key: finished.lock_key };

  const answers = await Promise.all([run.submit(row(record(nextStart()))), ...[first, overlapping, unkeyed, again].map((r) => run.submit(r))]);
  // The finished key's call, then all five together (submitted while the first batch was still settling).
  expect(run.stats()).toMatchObject({ batches: 2, items: 6 });
  expect(answers.slice(1)).toEqual([
    { outcome: 'created', status: 201, body: first.created_body },
    { outcome: 'conflict', status: 409, body: overlapping.conflict_body },
    { outcome: 'created', status: 201, body: unkeyed.created_body },
    { outcome: 'found', status: 201, body: finished.created_body, fingerprint: finished.fingerprint, sealed: false },
  ]);

  const q = (text: string, values: unknown[]) => h.db.adminPool.query(text, values).then((r) => r.rows);
  expect(await q('SELECT id FROM booking.bookings WHERE id = ANY($1) ORDER BY id', [[first.id, overlapping.id, unkeyed.id, again.id]])).toEqual(
    [first.id, unkeyed.id].sort().map((id) => ({ id })),
  );
  // Outbox rows only for what was inserted, carrying the event as built; metadata kept as sent (json, key order).
  const events = await q('SELECT id, payload FROM booking.outbox WHERE id = ANY($1)', [[first.event_id, overlapping.event_id, unkeyed.event_id, again.event_id]]);
  expect(events.map((e) => e.id).sort()).toEqual([first.event_id, unkeyed.event_id].sort());
  expect(events.find((e) => e.id === first.event_id)!.payload).toEqual(JSON.parse(first.event));
  expect(await q('SELECT metadata::text AS m FROM booking.bookings WHERE id = $1', [first.id])).toEqual([{ m: '{"z":1,"a":2}' }]);
  // Key rows: the 201 and the 409 are stored as answers; the unkeyed create has none.
  const keys = await q('SELECT id, response_status, response_body, fingerprint FROM booking.idempotency_keys WHERE id = ANY($1) ORDER BY response_status', [
    [first.key_id, overlapping.key_id],
  ]);
  expect(keys).toEqual([
    { id: first.key_id, response_status: 201, response_body: first.created_body, fingerprint: first.fingerprint },
    { id: overlapping.key_id, response_status: 409, response_body: overlapping.conflict_body, fingerprint: overlapping.fingerprint },
  ]);
});

it('answers in_progress and writes nothing for a key whose lock another transaction holds', async () => {
  const item = row(record(nextStart()));
  const other = new Client({ connectionString: h.db.adminUrl });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock($1::bigint)', [item.lock_key]);
    expect(await batcher().submit(item)).toEqual({ outcome: 'in_progress' });
    await other.query('ROLLBACK');
  } finally {
    await other.end();
  }
  const { rows } = await h.db.adminPool.query('SELECT count(*)::int AS n FROM booking.bookings WHERE id = $1', [item.id]);
  expect(rows[0].n).toBe(0);
  expect(await batcher().submit(item)).toMatchObject({ outcome: 'created' });
});

it('wakes the outbox relay with one NOTIFY per batch, delivered at commit', async () => {
  const listener = new Client({ connectionString: h.db.adminUrl });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.channel));
  try {
    await listener.query('LISTEN test_batch_outbox');
    const run = createBookingBatcher({ pool: h.db.adminPool, outboxChannel: 'test_batch_outbox', maxInFlight: 1, maxBatch: 64 });
    await run.submit(row(record(nextStart())));
    const start = nextStart();
    await Promise.all([row(record(start)), row(record(start))].map((r) => run.submit(r))); // one created, one conflict
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual(['test_batch_outbox', 'test_batch_outbox']);
  } finally {
    await listener.end();
  }
});

it('through the gateway, concurrent creates of distinct slots share transactions (fewer transaction ids than Bookings)', async () => {
  const bodies = Array.from({ length: 40 }, () => createBody());
  const results = await Promise.all(bodies.map((json, i) => h.api('POST', '/v1/bookings', { json, headers: { 'idempotency-key': `gc-${i}` } })));
  expect(results.map((r) => r.status)).toEqual(bodies.map(() => 201));
  const { rows } = await h.db.adminPool.query('SELECT count(*)::int AS bookings, count(DISTINCT xmin::text)::int AS transactions FROM booking.bookings WHERE id = ANY($1)', [
    results.map((r) => r.body.data.id),
  ]);
  expect(rows[0].bookings).toBe(40);
  expect(rows[0].transactions).toBeLessThan(40);
});
