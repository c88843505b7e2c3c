import { bookable } from './support/availability-stub';
import { createBody, nextStart, startBookingHarness, type BookingHarness } from './support/booking-harness';

/**
 * The two promises users care most about, under real concurrency on real Postgres through the gateway:
 * a slot is never sold twice, and a retried request never books twice. The availability stub says
 * "bookable" to everyone, so only the database constraint and the idempotency lock stand in the way.
 */
let h: BookingHarness;
beforeAll(async () => {
  h = await startBookingHarness({ stub: bookable({ bufferBeforeMin: 10, bufferAfterMin: 10 }) });
});
afterAll(async () => {
  await h.close();
});

function tally(results: Array<{ status: number; body: any }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    const k = r.status === 201 ? '201' : `${r.status} ${r.body?.error?.code ?? ''}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

it('when 50 guests book the same slot at once, exactly one gets 201 and the other 49 get 409 slot_unavailable, no 5xx', async () => {
  const start = nextStart();
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      h.api('POST', '/v1/bookings', { json: createBody({ start_at: start, guest: { name: `Guest ${i}`, email: `g${i}@example.com`, timezone: 'UTC' } }) }),
    ),
  );
  // One summary, so a failure shows every status and code that came back.
  expect(tally(results)).toEqual({ '201': 1, '409 slot_unavailable': 49 });
  const { rows } = await h.db.adminPool.query(`SELECT id FROM booking.bookings WHERE start_at = $1`, [start]);
  expect(rows).toHaveLength(1);
  expect(rows[0].id).toBe(results.find((r) => r.status === 201)!.body.data.id);
  const events = await h.db.adminPool.query(`SELECT count(*)::int AS n FROM booking.outbox WHERE payload->'data'->'booking'->>'start_at' = $1`, [start]);
  expect(events.rows[0].n).toBe(1);
});

it('when 50 identical requests share one Idempotency-Key, one Booking is made and the others replay it or hear 409 in progress', async () => {
  const json = createBody();
  const results = await Promise.all(Array.from({ length: 50 }, () => h.api('POST', '/v1/bookings', { json, headers: { 'idempotency-key': 'same-everywhere' } })));
  const created = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
  const replays = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === 'true');
  const inProgress = results.filter((r) => r.status === 409);
  expect(created).toHaveLength(1);
  expect(replays.length + inProgress.length).toBe(49);
  for (const r of replays) expect(r.body).toEqual({ ...created[0]!.body, meta: { request_id: r.headers.get('x-request-id') } });
  for (const r of inProgress) {
    expect(r.body.error.code).toBe('idempotency_request_in_progress');
    expect(r.headers.get('retry-after')).toBe('1');
  }
  const { rows } = await h.db.adminPool.query(`SELECT id FROM booking.bookings WHERE start_at = $1`, [json.start_at]);
  expect(rows.map((r) => r.id)).toEqual([created[0]!.body.data.id]);
  // A late retry, after everything settled, replays too.
  const late = await h.api('POST', '/v1/bookings', { json, headers: { 'idempotency-key': 'same-everywhere' } });
  expect([late.status, late.headers.get('idempotent-replayed'), late.body.data.id]).toEqual([201, 'true', created[0]!.body.data.id]);
});

it('when two clients reschedule the same version at once, one gets 200 and the other 409 version_conflict, every time', async () => {
  for (let round = 0; round < 10; round++) {
    const booking = (await h.api('POST', '/v1/bookings', { json: createBody() })).body.data;
    const [a, b] = await Promise.all([
      h.api('POST', `/v1/bookings/${booking.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } }),
      h.api('POST', `/v1/bookings/${booking.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    const winner = a.status === 200 ? a : b;
    expect(loser.body.error).toEqual({ code: 'version_conflict', message: expect.any(String), details: [{ field: 'expected_version', issue: 'current_version_2' }] });
    const read = await h.api('GET', `/v1/bookings/${booking.id}`);
    expect(read.body.data).toEqual(winner.body.data);
  }
});

it('a cancel racing a reschedule of the same version: exactly one wins, the other sees version_conflict or booking_cancelled', async () => {
  for (let round = 0; round < 5; round++) {
    const booking = (await h.api('POST', '/v1/bookings', { json: createBody() })).body.data;
    const [r, c] = await Promise.all([
      h.api('POST', `/v1/bookings/${booking.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } }),
      h.api('POST', `/v1/bookings/${booking.id}/cancel`, { json: { expected_version: 1 } }),
    ]);
    expect([r.status, c.status].filter((s) => s === 200)).toHaveLength(1);
    const loser = r.status === 200 ? c : r;
    expect(['version_conflict', 'booking_cancelled']).toContain(loser.body.error.code);
    expect((await h.api('GET', `/v1/bookings/${booking.id}`)).body.data.version).toBe(2);
  }
});
