import { bookingSchema } from '@sched/contracts';
import { bookable, EVENT_TYPE_ID, HOST_ID, refusing } from './support/availability-stub';
import { createBody, nextStart, startBookingHarness, type BookingHarness } from './support/booking-harness';

let h: BookingHarness;
beforeAll(async () => {
  h = await startBookingHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => h.stub.behave(bookable()));

async function create(over: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return h.api('POST', '/v1/bookings', { json: createBody(over), headers });
}

async function bookingRows(): Promise<number> {
  return (await h.db.adminPool.query('SELECT count(*)::int AS n FROM booking.bookings')).rows[0].n;
}

async function outboxFor(bookingId: string): Promise<Array<{ type: string; payload: any }>> {
  const { rows } = await h.db.adminPool.query(
    `SELECT type, payload FROM booking.outbox WHERE payload->'data'->'booking'->>'id' = $1 ORDER BY created_at, id`,
    [bookingId],
  );
  return rows;
}

describe('POST /v1/bookings', () => {
  it('creates a confirmed Booking: version 1, calendar pending, nulls, source api, meeting.type and times from the slot check', async () => {
    h.stub.behave(bookable({ meetingType: 'phone', durationMin: 45, bufferBeforeMin: 10, bufferAfterMin: 5 }));
    const start = nextStart();
    const res = await create({ start_at: start.replace('.000Z', 'Z') });
    expect(res.status).toBe(201);
    expect(bookingSchema.parse(res.body.data)).toEqual(res.body.data);
    expect(res.body.meta).toEqual({ request_id: res.headers.get('x-request-id') });
    const b = res.body.data;
    expect(b).toMatchObject({
      status: 'confirmed',
      version: 1,
      source: 'api',
      event_type_id: EVENT_TYPE_ID,
      host_id: HOST_ID,
      start_at: start,
      end_at: new Date(Date.parse(start) + 45 * 60_000).toISOString(),
      guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
      meeting: { type: 'phone', join_url: null },
      calendar: { status: 'pending', error_code: null },
      metadata: {},
      rescheduled_at: null,
      cancelled_at: null,
    });
    expect(b.id).toMatch(/^bkg_/);
    const call = h.stub.calls.at(-1)!;
    // The check carries the create's request id (for availability's logs when it shares a call with others).
    expect(call).toEqual({ workspaceId: h.main.workspaceId, body: { event_type_id: EVENT_TYPE_ID, start_at: start }, requestId: res.body.meta.request_id });
  });

  it('writes booking.created to the outbox in the same transaction, with the Booking as returned and the blocked range', async () => {
    h.stub.behave(bookable({ bufferBeforeMin: 15, bufferAfterMin: 5 }));
    const res = await create();
    const events = await outboxFor(res.body.data.id);
    expect(events.map((e) => e.type)).toEqual(['booking.created']);
    const start = Date.parse(res.body.data.start_at);
    expect(events[0]!.payload).toMatchObject({
      id: expect.stringMatching(/^wev_/),
      type: 'booking.created',
      workspace_id: h.main.workspaceId,
      schema_version: 1,
      data: {
        booking: res.body.data,
        internal: {
          blocked_from: new Date(start - 15 * 60_000).toISOString(),
          blocked_to: new Date(start + 35 * 60_000).toISOString(),
          invitation_id: null,
        },
      },
    });
  });

  it('returns metadata exactly as sent, key order included, on create, read and list', async () => {
    const metadata = { zeta: 1, alpha: { b: [3, null, true], a: 'é' }, mid: { y: 1, x: 2 } };
    const res = await create({ metadata });
    expect(JSON.stringify(res.body.data.metadata)).toBe(JSON.stringify(metadata));
    const read = await h.api('GET', `/v1/bookings/${res.body.data.id}`);
    expect(JSON.stringify(read.body.data.metadata)).toBe(JSON.stringify(metadata));
    const list = await h.api('GET', '/v1/bookings?limit=100');
    const listed = list.body.data.find((b: any) => b.id === res.body.data.id);
    expect(JSON.stringify(listed.metadata)).toBe(JSON.stringify(metadata));
  });

  it('maps the slot check: unknown Event Type 422 invalid_reference, not bookable 409, slot gone 409 slot_unavailable; nothing stored', async () => {
    const before = await bookingRows();
    h.stub.behave(refusing('not_found'));
    const missing = await create();
    expect(missing.status).toBe(422);
    expect(missing.body.error).toEqual({ code: 'invalid_reference', message: expect.any(String), details: [{ field: 'event_type_id', issue: 'not_found' }] });
    h.stub.behave(refusing('event_type_not_bookable'));
    expect((await create()).body.error.code).toBe('event_type_not_bookable');
    h.stub.behave(refusing('slot_unavailable'));
    const gone = await create();
    expect(gone.status).toBe(409);
    expect(gone.body.error.code).toBe('slot_unavailable');
    expect(await bookingRows()).toBe(before);
  });

  it('fails closed: availability 503 → 503 calendar_unavailable with its Retry-After; too slow → 504; unreachable or off-contract → 502', async () => {
    const before = await bookingRows();
    h.stub.behave(() => ({ status: 503, headers: { 'retry-after': '7' }, body: { error: { code: 'calendar_unavailable', message: 'x', details: [] }, meta: { request_id: 'r' } } }));
    const down = await create();
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('calendar_unavailable');
    expect(down.headers.get('retry-after')).toBe('7');

    // availability's database down is not the calendar: passed on as service_unavailable (decisions.md §2).
    h.stub.behave(() => ({ status: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'service_unavailable', message: 'x', details: [] }, meta: { request_id: 'r' } } }));
    const storeDown = await create();
    expect([storeDown.status, storeDown.body.error.code, storeDown.headers.get('retry-after')]).toEqual([503, 'service_unavailable', '5']);

    const slow = bookable();
    h.stub.behave((c) => ({ ...slow(c), delayMs: 1500 }));
    const timedOut = await create();
    expect(timedOut.status).toBe(504);
    expect(timedOut.body.error.code).toBe('upstream_unavailable');

    const callsBefore = h.stub.calls.length;
    h.stub.behave(() => ({ status: 200, hangUp: true }));
    const unreachable = await create();
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error.code).toBe('upstream_unavailable');
    expect(unreachable.headers.get('retry-after')).toBe('1');
    expect(h.stub.calls.length - callsBefore).toBe(2); // one immediate retry: the check has no side effects

    h.stub.behave(() => ({ status: 200, body: { data: { bookable: 'maybe' } } }));
    const garbage = await create();
    expect(garbage.status).toBe(502);
    expect(garbage.body.error.code).toBe('upstream_unavailable');
    expect(await bookingRows()).toBe(before);
  });

  it('a Booking never overlaps another confirmed Booking of its host, buffers included; touching ranges and other hosts are fine', async () => {
    // Starts 30 minutes apart with 15-minute buffers: the blocked ranges overlap although the meetings do not.
    h.stub.behave(bookable({ bufferBeforeMin: 15, bufferAfterMin: 15 }));
    const base = nextStart();
    nextStart();
    const first = await create({ start_at: base });
    expect(first.status).toBe(201);
    const clash = await create({ start_at: new Date(Date.parse(base) + 30 * 60_000).toISOString() });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe('slot_unavailable');
    // [base-15, base+45) and [base+45, base+105): touching, half-open, no overlap.
    const touching = await h.api('POST', '/v1/bookings', { json: createBody({ start_at: new Date(Date.parse(base) + 60 * 60_000).toISOString() }) });
    expect(touching.status).toBe(201);
    h.stub.behave(bookable({ hostId: 'hst_BBBBBBBBBBBBBBBBBBBBBB', bufferBeforeMin: 15, bufferAfterMin: 15 }));
    expect((await create({ start_at: base })).status).toBe(201);
  });
});

describe('GET /v1/bookings/:booking', () => {
  it('reads a Booking exactly as created', async () => {
    const created = await create();
    const read = await h.api('GET', `/v1/bookings/${created.body.data.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created.body.data);
  });

  it('answers another workspace’s id with the same 404 as an unknown or malformed id', async () => {
    const created = await create();
    const other = await h.newWorkspace();
    const foreign = await h.api('GET', `/v1/bookings/${created.body.data.id}`, { as: other });
    const unknown = await h.api('GET', '/v1/bookings/bkg_AAAAAAAAAAAAAAAAAAAAAA', { as: other });
    const malformed = await h.api('GET', '/v1/bookings/nope', { as: other });
    for (const r of [foreign, unknown, malformed]) {
      expect(r.status).toBe(404);
      expect({ ...r.body, meta: null }).toEqual({ error: { code: 'not_found', message: expect.any(String), details: [] }, meta: null });
    }
    expect(foreign.body.error).toEqual(unknown.body.error);
    expect(JSON.stringify(foreign.body)).not.toContain(created.body.data.id);
    // Mutations too: cancel and reschedule of another workspace's Booking are 404 and change nothing.
    expect((await h.api('POST', `/v1/bookings/${created.body.data.id}/cancel`, { as: other })).status).toBe(404);
    expect((await h.api('POST', `/v1/bookings/${created.body.data.id}/reschedule`, { as: other, json: { start_at: nextStart(), expected_version: 1 } })).status).toBe(404);
    expect((await h.api('GET', `/v1/bookings/${created.body.data.id}`)).body.data.version).toBe(1);
  });
});

describe('POST /v1/bookings/:booking/reschedule', () => {
  it('moves the Booking: version +1, rescheduled_at set, calendar back to pending, slot check told to ignore the Booking itself', async () => {
    const created = (await create()).body.data;
    await h.db.adminPool.query(`UPDATE booking.bookings SET calendar_status = 'synced' WHERE id = $1`, [created.id]);
    const to = nextStart();
    const res = await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: to, expected_version: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: created.id,
      version: 2,
      start_at: to,
      end_at: new Date(Date.parse(to) + 30 * 60_000).toISOString(),
      calendar: { status: 'pending', error_code: null },
      created_at: created.created_at,
      cancelled_at: null,
    });
    expect(Date.parse(res.body.data.rescheduled_at)).toBeGreaterThanOrEqual(Date.parse(created.created_at));
    expect(h.stub.calls.at(-1)!.body).toEqual({ event_type_id: EVENT_TYPE_ID, start_at: to, exclude_booking_id: created.id });
    const events = await outboxFor(created.id);
    expect(events.map((e) => e.type)).toEqual(['booking.created', 'booking.rescheduled']);
    expect(events[1]!.payload.data.booking).toEqual(res.body.data);
  });

  it('allows a reschedule onto a range overlapping its own current time (its own range never blocks it)', async () => {
    const created = (await create()).body.data;
    const later = new Date(Date.parse(created.start_at) + 15 * 60_000).toISOString();
    const res = await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: later, expected_version: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.data.start_at).toBe(later);
    const same = await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: later, expected_version: 2 } });
    expect(same.status).toBe(200);
    expect(same.body.data.version).toBe(3);
  });

  it('refuses a new range that overlaps another Booking even when the check said yes, and leaves the Booking as it was', async () => {
    const a = (await create()).body.data;
    const b = (await create()).body.data;
    const res = await h.api('POST', `/v1/bookings/${b.id}/reschedule`, { json: { start_at: a.start_at, expected_version: 1 } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('slot_unavailable');
    expect((await h.api('GET', `/v1/bookings/${b.id}`)).body.data).toEqual(b);
  });

  it('answers 409 version_conflict naming the current version, and slot refusals like create', async () => {
    const created = (await create()).body.data;
    await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } });
    const stale = await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toEqual({ code: 'version_conflict', message: expect.any(String), details: [{ field: 'expected_version', issue: 'current_version_2' }] });
    h.stub.behave(refusing('slot_unavailable'));
    expect((await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 2 } })).body.error.code).toBe('slot_unavailable');
    h.stub.behave(refusing('not_found'));
    expect((await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 2 } })).body.error.code).toBe('slot_unavailable');
    h.stub.behave(refusing('event_type_not_bookable'));
    expect((await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: nextStart(), expected_version: 2 } })).body.error.code).toBe('event_type_not_bookable');
  });
});

describe('POST /v1/bookings/:booking/cancel', () => {
  it('cancels without a body: version +1, cancelled_at set, calendar pending, booking.cancelled published, slot free again', async () => {
    const created = (await create()).body.data;
    const res = await h.api('POST', `/v1/bookings/${created.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'cancelled', version: 2, calendar: { status: 'pending', error_code: null }, rescheduled_at: null });
    expect(res.body.data.cancelled_at).toEqual(expect.any(String));
    expect((await outboxFor(created.id)).map((e) => e.type)).toEqual(['booking.created', 'booking.cancelled']);
    expect((await create({ start_at: created.start_at })).status).toBe(201);
  });

  it('checks an optional expected_version, and refuses a cancelled Booking with booking_cancelled (before any version check)', async () => {
    const created = (await create()).body.data;
    const stale = await h.api('POST', `/v1/bookings/${created.id}/cancel`, { json: { expected_version: 2 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.details).toEqual([{ field: 'expected_version', issue: 'current_version_1' }]);
    expect((await h.api('POST', `/v1/bookings/${created.id}/cancel`, { json: { expected_version: 1 } })).status).toBe(200);
    for (const [path, json] of [
      ['cancel', undefined],
      ['cancel', { expected_version: 1 }],
      ['reschedule', { start_at: nextStart(), expected_version: 1 }],
      ['reschedule', { start_at: nextStart(), expected_version: 2 }],
    ] as const) {
      const res = await h.api('POST', `/v1/bookings/${created.id}/${path}`, { json });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('booking_cancelled');
    }
  });
});

describe('GET /v1/bookings', () => {
  let ws: Awaited<ReturnType<BookingHarness['newWorkspace']>>;
  const ids: string[] = [];
  const day = Date.UTC(2032, 5, 1);
  beforeAll(async () => {
    ws = await h.newWorkspace();
    // Three hosts at the same start (id breaks the tie), plus later ones; one cancelled, one of another Event Type.
    for (let i = 0; i < 7; i++) {
      h.stub.behave(bookable({ hostId: `hst_${String(i).repeat(22)}` }));
      const start = new Date(day + (i < 3 ? 0 : i) * 3_600_000).toISOString();
      const res = await h.api('POST', '/v1/bookings', { as: ws, json: createBody({ start_at: start, event_type_id: i === 6 ? 'evt_OTHEROTHEROTHEROTHER1' : EVENT_TYPE_ID }) });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    await h.api('POST', `/v1/bookings/${ids[5]}/cancel`, { as: ws });
  });

  const listAll = async (query: string) => {
    const seen: any[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const res: any = await h.api('GET', `/v1/bookings?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { as: ws });
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      cursor = res.body.meta.next_cursor;
      if (!cursor) break;
    }
    return seen;
  };

  it('pages through every Booking of the workspace by start_at then id, with signed cursors and a null cursor at the end', async () => {
    const all = await listAll('limit=2');
    expect(all.map((b) => b.id).sort()).toEqual([...ids].sort());
    const keys = all.map((b) => [b.start_at, b.id]);
    expect(keys).toEqual([...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1)));
    const first = await h.api('GET', '/v1/bookings?limit=7', { as: ws });
    expect(first.body.meta).toEqual({ request_id: first.headers.get('x-request-id'), next_cursor: null });
  });

  it('uses a default page size of 20', async () => {
    const big = await h.newWorkspace();
    for (let i = 0; i < 21; i++) {
      h.stub.behave(bookable({ hostId: `hst_big${String(i).padStart(2, '0')}${'x'.repeat(14)}` }));
      expect((await h.api('POST', '/v1/bookings', { as: big, json: createBody({ start_at: new Date(day).toISOString() }) })).status).toBe(201);
    }
    const res = await h.api('GET', '/v1/bookings', { as: big });
    expect(res.body.data).toHaveLength(20);
    expect(res.body.meta.next_cursor).toEqual(expect.any(String));
  });

  it('filters by status, event_type_id and the [starts_from, starts_to) window', async () => {
    expect((await listAll('status=cancelled')).map((b) => b.id)).toEqual([ids[5]]);
    expect((await listAll('status=confirmed')).map((b) => b.id)).not.toContain(ids[5]);
    expect((await listAll('event_type_id=evt_OTHEROTHEROTHEROTHER1')).map((b) => b.id)).toEqual([ids[6]]);
    const from = new Date(day + 3 * 3_600_000).toISOString();
    const to = new Date(day + 5 * 3_600_000).toISOString();
    expect((await listAll(`starts_from=${from}&starts_to=${to}&limit=1`)).map((b) => b.id)).toEqual([ids[3], ids[4]]);
  });

  it('refuses a cursor used with other filters, a tampered cursor and another list’s cursor: 400 naming cursor', async () => {
    const page = await h.api('GET', '/v1/bookings?limit=1&status=confirmed', { as: ws });
    const cursor = page.body.meta.next_cursor as string;
    const otherFilters = await h.api('GET', `/v1/bookings?limit=1&status=cancelled&cursor=${encodeURIComponent(cursor)}`, { as: ws });
    const tampered = await h.api('GET', `/v1/bookings?limit=1&status=confirmed&cursor=${encodeURIComponent('x' + cursor.slice(1))}`, { as: ws });
    for (const r of [otherFilters, tampered]) {
      expect(r.status).toBe(400);
      expect(r.body.error.details).toEqual([{ field: 'cursor', issue: 'invalid_format' }]);
    }
    // The same cursor with the same filters and another page size is fine.
    expect((await h.api('GET', `/v1/bookings?limit=3&status=confirmed&cursor=${encodeURIComponent(cursor)}`, { as: ws })).status).toBe(200);
  });

  it('never lists another workspace’s Bookings', async () => {
    const other = await h.newWorkspace();
    const res = await h.api('GET', '/v1/bookings?limit=100', { as: other });
    expect(res.body.data).toEqual([]);
  });
});

describe('Idempotency-Key on the Booking endpoints', () => {
  it('replays a create: same status and body but request_id, Idempotent-Replayed: true, one Booking, one event', async () => {
    const json = createBody();
    const headers = { 'idempotency-key': 'create-once' };
    const first = await h.api('POST', '/v1/bookings', { json, headers });
    const again = await h.api('POST', '/v1/bookings', { json, headers });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The first answer is the body stored under the key, sent as stored, with res.json's headers.
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual({ ...first.body, meta: { request_id: again.headers.get('x-request-id') } });
    expect(again.body.meta.request_id).not.toBe(first.body.meta.request_id);
    expect(await outboxFor(first.body.data.id)).toHaveLength(1);
  });

  it('replays a finished create even while availability is down (the slot check asked ahead does not decide a replay)', async () => {
    const json = createBody();
    const headers = { 'idempotency-key': 'replay-when-down' };
    const first = await h.api('POST', '/v1/bookings', { json, headers });
    expect(first.status).toBe(201);
    h.stub.behave(() => ({ status: 503, headers: { 'retry-after': '3' } }));
    try {
      const again = await h.api('POST', '/v1/bookings', { json, headers });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.data).toEqual(first.body.data);
      // A new request is still refused, failing closed.
      const fresh = await h.api('POST', '/v1/bookings', { json: createBody(), headers: { 'idempotency-key': 'new-while-down' } });
      expect(fresh.status).toBe(503);
      expect(fresh.body.error.code).toBe('calendar_unavailable');
    } finally {
      h.stub.behave(bookable());
    }
  });

  it('refuses a malformed Idempotency-Key with 400 before asking availability', async () => {
    h.stub.behave(() => ({ status: 503, headers: { 'retry-after': '3' } }));
    try {
      const res = await h.api('POST', '/v1/bookings', { json: createBody(), headers: { 'idempotency-key': '' } });
      expect(res.status).toBe(400);
    } finally {
      h.stub.behave(bookable());
    }
  });

  it('answers 422 idempotency_key_reused for the same key with another body; another API key has its own keys', async () => {
    const headers = { 'idempotency-key': 'reuse-me' };
    expect((await h.api('POST', '/v1/bookings', { json: createBody(), headers })).status).toBe(201);
    const changed = await h.api('POST', '/v1/bookings', { json: createBody(), headers });
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe('idempotency_key_reused');
    const other = await h.newWorkspace();
    expect((await h.api('POST', '/v1/bookings', { as: other, json: createBody(), headers })).status).toBe(201);
  });

  it('stores a 4xx answer (replayed even once the slot is free) but not a 503 (a retry then books)', async () => {
    h.stub.behave(refusing('slot_unavailable'));
    const json = createBody();
    const first = await h.api('POST', '/v1/bookings', { json, headers: { 'idempotency-key': 'four-oh-nine' } });
    expect(first.status).toBe(409);
    h.stub.behave(bookable());
    const replay = await h.api('POST', '/v1/bookings', { json, headers: { 'idempotency-key': 'four-oh-nine' } });
    expect(replay.status).toBe(409);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.error).toEqual(first.body.error);

    h.stub.behave(() => ({ status: 503, headers: { 'retry-after': '2' } }));
    const json2 = createBody();
    expect((await h.api('POST', '/v1/bookings', { json: json2, headers: { 'idempotency-key': 'five-oh-three' } })).status).toBe(503);
    h.stub.behave(bookable());
    const retry = await h.api('POST', '/v1/bookings', { json: json2, headers: { 'idempotency-key': 'five-oh-three' } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('replays a cancel and a reschedule instead of answering booking_cancelled / version_conflict to the retry', async () => {
    const created = (await create()).body.data;
    const to = nextStart();
    const r1 = await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: to, expected_version: 1 }, headers: { 'idempotency-key': 'r' } });
    const r2 = await h.api('POST', `/v1/bookings/${created.id}/reschedule`, { json: { start_at: to, expected_version: 1 }, headers: { 'idempotency-key': 'r' } });
    expect([r1.status, r2.status, r2.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true']);
    const c1 = await h.api('POST', `/v1/bookings/${created.id}/cancel`, { headers: { 'idempotency-key': 'c' } });
    // No body and {} are the same request.
    const c2 = await h.api('POST', `/v1/bookings/${created.id}/cancel`, { json: {}, headers: { 'idempotency-key': 'c' } });
    expect([c1.status, c2.status, c2.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true']);
    expect(c2.body.data).toEqual(c1.body.data);
    expect((await outboxFor(created.id)).map((e) => e.type)).toEqual(['booking.created', 'booking.rescheduled', 'booking.cancelled']);
  });
});
