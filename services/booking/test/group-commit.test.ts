import { Client } from 'pg';
import { toBookingResource, type BookingRecord } from '../src/domain/booking';
import { newBookingRecord } from '../src/domain/create-booking';
import { DomainError } from '@sched/contracts';
import { parseOutboxNotifyPayload } from '@sched/messaging';
import { waitFor } from '@sched/testing';
import type { CreateWrite } from '../src/domain/ports';
import { bookingCreates, createBatchRow } from '../src/store/create-batch.queries';
import { bookable } from './support/availability-stub';
import { createBody, nextStart, startBookingHarness, type BookingHarness } from './support/booking-harness';

/**
 * The store of creates (docs/booking.md, "Create"): booking.create_bookings (migration 0006) writes each item
 * of a batch in one transaction, under @sched/idempotency's protocol functions (migration 0005), and says how
 * each write ended. These tests give the store hand-made writes on real Postgres, then show through the
 * gateway that concurrent creates really share transactions.
 */
let h: BookingHarness;
beforeAll(async () => {
  // The stub answers each slot check after 25 ms, as a real slot check takes a little while: the creates
  // sent together then really are in flight together, whatever the machine's load, instead of depending
  // on a loaded CI machine not spacing them out (once, 40 creates all committed one by one).
  const answer = bookable();
  h = await startBookingHarness({ stub: (call) => ({ ...answer(call), delayMs: 25 }) });
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
const newKey = () => {
  keyCounter += 1;
  return { id: `key-${keyCounter}`, lockKey: String(900_000 + keyCounter), fingerprint: `fp-${keyCounter}` };
};
function insert(b: BookingRecord, keyed = true): Extract<CreateWrite, { kind: 'insert' }> {
  return { kind: 'insert', workspaceId: b.workspaceId, key: keyed ? newKey() : undefined, requestId: 'req_1', booking: b, announcement: { type: 'booking.created', booking: b, occurredAt: b.createdAt } };
}

const store = (channel = 'booking_outbox') => bookingCreates({ pool: h.db.adminPool, outboxChannel: channel, maxInFlight: 1, maxBatch: 64 });

it('writes each item of one batch on its own: created, slot taken by an earlier item, replay of a finished key, no key, refusal, failure', async () => {
  const start = nextStart();
  const first = insert(record(start));
  const overlapping = insert(record(start));
  const unkeyed = insert(record(nextStart()), false);
  // A key finished in an earlier transaction: its stored answer comes back, nothing new is written.
  const finished = insert(record(nextStart()));
  const creates = store();
  // A keyed create's answer is the 201 body stored under its key, as stored.
  expect(await creates.write(finished)).toEqual({ kind: 'created', answer: createBatchRow(finished).created_body });
  const again = { ...insert(record(nextStart())), key: finished.key };
  const refusal = new DomainError('event_type_not_bookable');
  const refused: CreateWrite = { kind: 'refuse', workspaceId: h.main.workspaceId, key: newKey(), requestId: 'req_2', refusal };
  const failed: CreateWrite = { kind: 'fail', workspaceId: h.main.workspaceId, key: newKey(), requestId: 'req_3', failure: new DomainError('calendar_unavailable') };

  const answers = await Promise.all([creates.write(insert(record(nextStart()))), ...[first, overlapping, unkeyed, again, refused, failed].map((w) => creates.write(w))]);
  // The finished key's call; then the next one alone (nothing was in flight) and all the rest together behind it.
  expect(creates.stats()).toMatchObject({ batches: 3, items: 8 });
  expect(answers.slice(1)).toEqual([
    { kind: 'created', answer: createBatchRow(first).created_body },
    { kind: 'slot_taken' },
    { kind: 'created' },
    { kind: 'found', row: { status: 201, body: createBatchRow(finished).created_body, fingerprint: finished.key!.fingerprint, sealed: false } },
    { kind: 'refused' },
    { kind: 'failed' },
  ]);

  const q = (text: string, values: unknown[]) => h.db.adminPool.query(text, values).then((r) => r.rows);
  const ids = [first, overlapping, unkeyed, again].map((w) => w.booking.id);
  expect(await q('SELECT id FROM booking.bookings WHERE id = ANY($1) ORDER BY id', [ids])).toEqual([first.booking.id, unkeyed.booking.id].sort().map((id) => ({ id })));
  // Outbox rows only for what was inserted, carrying the event as built; metadata kept as sent (json, key order).
  const events = await q("SELECT type, payload->'data'->'booking'->>'id' AS booking FROM booking.outbox WHERE payload->'data'->'booking'->>'id' = ANY($1)", [ids]);
  expect(events.map((e) => [e.type, e.booking]).sort()).toEqual([first.booking.id, unkeyed.booking.id].sort().map((id) => ['booking.created', id]));
  expect(await q('SELECT metadata::text AS m FROM booking.bookings WHERE id = $1', [first.booking.id])).toEqual([{ m: '{"z":1,"a":2}' }]);
  // Key rows: the 201 (the Booking's envelope), the 409 and the refusal are stored as answers; the failure and
  // the unkeyed create have none.
  const keys = await q('SELECT id, response_status, response_body, fingerprint FROM booking.idempotency_keys WHERE id = ANY($1) ORDER BY response_status, id', [
    [first.key!.id, overlapping.key!.id, refused.key!.id, failed.key!.id],
  ]);
  expect(keys.map((k) => [k.id, k.response_status, k.fingerprint])).toEqual([
    [first.key!.id, 201, first.key!.fingerprint],
    [overlapping.key!.id, 409, overlapping.key!.fingerprint],
    [refused.key!.id, 409, refused.key!.fingerprint],
  ]);
  expect(JSON.parse(keys[0].response_body)).toEqual({ data: toBookingResource(first.booking), meta: { request_id: 'req_1' } });
  expect(JSON.parse(keys[1].response_body)).toMatchObject({ error: { code: 'slot_unavailable' }, meta: { request_id: 'req_1' } });
  expect(JSON.parse(keys[2].response_body)).toEqual({ error: { code: refusal.code, message: refusal.message, details: [] }, meta: { request_id: 'req_2' } });
});

it('keeps refusals and failures without a key away from the database', async () => {
  const creates = store();
  expect(await creates.write({ kind: 'refuse', workspaceId: h.main.workspaceId, key: undefined, requestId: 'r', refusal: new DomainError('slot_unavailable') })).toEqual({ kind: 'refused' });
  expect(await creates.write({ kind: 'fail', workspaceId: h.main.workspaceId, key: undefined, requestId: 'r', failure: new Error('down') })).toEqual({ kind: 'failed' });
  expect(creates.stats()).toMatchObject({ batches: 0, items: 0 });
});

it('answers in_progress and writes nothing for a key whose lock another transaction holds', async () => {
  const item = insert(record(nextStart()));
  const other = new Client({ connectionString: h.db.adminUrl });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock($1::bigint)', [item.key!.lockKey]);
    expect(await store().write(item)).toEqual({ kind: 'in_progress' });
    await other.query('ROLLBACK');
  } finally {
    await other.end();
  }
  const { rows } = await h.db.adminPool.query('SELECT count(*)::int AS n FROM booking.bookings WHERE id = $1', [item.booking.id]);
  expect(rows[0].n).toBe(0);
  expect(await store().write(item)).toEqual({ kind: 'created', answer: createBatchRow(item).created_body });
});

it('wakes the outbox relay with one NOTIFY per batch, delivered at commit, naming the events it created (migration 0007)', async () => {
  const listener = new Client({ connectionString: h.db.adminUrl });
  await listener.connect();
  const heard: Array<{ channel: string; payload: string | undefined }> = [];
  const MARKER = 'test-marker';
  listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload }));
  try {
    await listener.query('LISTEN test_batch_outbox');
    const creates = store('test_batch_outbox');
    const alone = insert(record(nextStart()));
    await creates.write(alone);
    const start = nextStart();
    const pair = [insert(record(start)), insert(record(start))];
    const answers = await Promise.all(pair.map((w) => creates.write(w))); // one created, one slot taken
    const created = pair[answers.findIndex((a) => a.kind === 'created')]!;
    // Notifications arrive in commit order: once this later one is heard, every batch's has been.
    await h.db.adminPool.query('SELECT pg_notify($1, $2)', ['test_batch_outbox', MARKER]);
    await waitFor(() => heard.some((n) => n.payload === MARKER));
    expect(heard.map((n) => n.channel)).toEqual(['test_batch_outbox', 'test_batch_outbox', 'test_batch_outbox']);
    // The relay claims exactly the rows a payload names (libs/messaging parseOutboxNotifyPayload).
    const eventOf = async (w: typeof alone) =>
      (await h.db.adminPool.query(`SELECT id FROM booking.outbox WHERE payload->'data'->'booking'->>'id' = $1`, [w.booking.id])).rows.map((r) => r.id as string);
    expect(heard.map((n) => parseOutboxNotifyPayload(n.payload ?? ''))).toEqual([await eventOf(alone), await eventOf(created), undefined]);
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

it('through the gateway, concurrent creates share calls to availability (fewer slot-checks calls than creates, each create checked once)', async () => {
  const requestsBefore = h.stub.requests.length;
  const checksBefore = h.stub.calls.length;
  const bodies = Array.from({ length: 32 }, () => createBody());
  const results = await Promise.all(bodies.map((json) => h.api('POST', '/v1/bookings', { json })));
  expect(results.map((r) => r.status)).toEqual(bodies.map(() => 201));
  const calls = h.stub.requests.slice(requestsBefore);
  expect(h.stub.calls.length - checksBefore).toBe(32);
  expect(new Set(h.stub.calls.slice(checksBefore).map((c) => c.requestId)).size).toBe(32);
  expect(calls.length).toBeLessThan(32);
});
