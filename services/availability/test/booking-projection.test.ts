import { newId, SLOT_CHECKS_MAX, slotCheckResponseSchema, slotChecksResponseSchema } from '@sched/contracts';
import { makeBooking, waitFor, waitForEventsHandled } from '@sched/testing';
import { bookingEvent, call, startSystem, Tenant, type System } from './support/system';

const NOW = new Date('2026-06-01T00:00:00.000Z');
// Monday 2026-06-08 in Berlin (UTC+2): the host works 09:00–17:00 = 07:00Z–15:00Z.
const MONDAY = '?from=2026-06-08&to=2026-06-08&timezone=UTC';

let sys: System;
let t: Tenant;
let evt: string;
let hostId: string;

beforeAll(async () => {
  sys = await startSystem({ now: () => NOW });
  t = await Tenant.create(sys);
  // 30-minute meetings every 30 minutes with 10 minutes of buffer on both sides.
  ({ eventTypeId: evt, hostId } = await t.bookable({ eventType: { buffer_before_minutes: 10, buffer_after_minutes: 10 } }));
});

afterAll(async () => {
  await sys?.close();
});

const startsOn = async (id = evt, tenant = t): Promise<string[]> => {
  const res = await tenant.v1('GET', `/v1/event-types/${id}/slots${MONDAY}`);
  expect(res.status).toBe(200);
  return res.body.data.map((s: any) => s.start_at.slice(11, 16));
};
const until = (predicate: (starts: string[]) => boolean, id?: string) => waitFor(async () => predicate(await startsOn(id)) || null);
const inboxRows = async (eventId: string) => (await sys.db.adminPool.query('SELECT count(*)::int AS n FROM availability.inbox WHERE event_id = $1', [eventId])).rows[0].n;
// Booking events skip the inbox (the versioned upsert is idempotent by itself): a handled one shows as its row.
const rowAt = (bookingId: string, version: number) =>
  waitFor(async () => ((await sys.db.adminPool.query('SELECT version FROM availability.booked_intervals WHERE booking_id = $1', [bookingId])).rows[0]?.version ?? 0) >= version);
// A message that must change nothing has no effect to wait for: wait until the consumer says it handled it.
const handled = (from: number, ...ids: string[]) => waitForEventsHandled(sys.logs, ids, { from });
const mk = (start: string, end: string, over: { id?: string; version?: number; status?: 'confirmed' | 'cancelled'; hostId?: string } = {}) =>
  makeBooking({ host_id: over.hostId ?? hostId, event_type_id: evt, start_at: `2026-06-08T${start}:00.000Z`, end_at: `2026-06-08T${end}:00.000Z`, ...(over.id && { id: over.id }), ...(over.version && { version: over.version }), ...(over.status && { status: over.status }) });
const blocked = (from: string, to: string) => ({ blocked_from: `2026-06-08T${from}:00.000Z`, blocked_to: `2026-06-08T${to}:00.000Z`, invitation_id: null });

describe('booked-interval projection (booking.* events on the exchange)', () => {
  it('a confirmed Booking removes every Slot whose blocked range overlaps its own; cancelling it frees them again', async () => {
    const b = mk('08:00', '08:30');
    await sys.publish(bookingEvent('booking.created', t.ws, b, blocked('07:50', '08:40')));
    // Own range [s−10, s+40) overlaps [07:50, 08:40) for s in (07:10, 08:50): 07:30, 08:00, 08:30.
    await until((s) => !s.includes('08:00'));
    expect(await startsOn()).toEqual(expect.not.arrayContaining(['07:30', '08:00', '08:30']));
    expect(await startsOn()).toEqual(expect.arrayContaining(['07:00', '09:00']));
    await sys.publish(bookingEvent('booking.cancelled', t.ws, { ...b, status: 'cancelled', version: 2, cancelled_at: '2026-05-03T00:00:00.000Z' }, blocked('07:50', '08:40')));
    await until((s) => s.length === 16);
  });

  it('handles a duplicate delivery once, and a late or repeated booking.created after the cancel does not bring the Booking back', async () => {
    const b = mk('10:00', '10:30');
    const created = bookingEvent('booking.created', t.ws, b, blocked('09:50', '10:40'));
    await sys.publish(created);
    await sys.publish(created);
    await until((s) => !s.includes('10:00'));
    await rowAt(b.id, 1);
    expect(await inboxRows(created.id)).toBe(0);
    const cancelled = bookingEvent('booking.cancelled', t.ws, { ...b, status: 'cancelled', version: 2 }, blocked('09:50', '10:40'));
    await sys.publish(cancelled);
    await until((s) => s.includes('10:00'));
    // The same message again (a redelivery) and a different message with the older version (out of order).
    const from = sys.logs.length;
    await sys.publish(created);
    const stale = bookingEvent('booking.created', t.ws, b, blocked('09:50', '10:40'));
    await sys.publish(stale);
    await handled(from, created.id, stale.id);
    expect(await startsOn()).toContain('10:00');
    const row = await sys.db.adminPool.query('SELECT version, status FROM availability.booked_intervals WHERE booking_id = $1', [b.id]);
    expect(row.rows).toEqual([{ version: 2, status: 'cancelled' }]);
  });

  it('a reschedule moves the block, whichever of the two events arrives first', async () => {
    const b = mk('11:00', '11:30');
    const moved = { ...b, version: 2, start_at: '2026-06-08T13:00:00.000Z', end_at: '2026-06-08T13:30:00.000Z', rescheduled_at: '2026-05-04T00:00:00.000Z' };
    const rescheduled = bookingEvent('booking.rescheduled', t.ws, moved, blocked('12:50', '13:40'));
    await sys.publish(rescheduled);
    await rowAt(b.id, 2);
    const created = bookingEvent('booking.created', t.ws, b, blocked('10:50', '11:40'));
    const from = sys.logs.length;
    await sys.publish(created);
    await handled(from, created.id);
    const starts = await startsOn();
    expect(starts).toContain('11:00');
    expect(starts).not.toContain('13:00');
    await sys.publish(bookingEvent('booking.cancelled', t.ws, { ...moved, status: 'cancelled', version: 3 }, blocked('12:50', '13:40')));
    await until((s) => s.includes('13:00'));
  });

  it('without data.internal the blocked range comes from the Event Type\'s buffers', async () => {
    const b = mk('14:00', '14:30');
    const e = bookingEvent('booking.created', t.ws, b);
    await sys.publish(e);
    await rowAt(b.id, 1);
    const row = await sys.db.adminPool.query('SELECT blocked_from, blocked_to FROM availability.booked_intervals WHERE booking_id = $1', [b.id]);
    expect(row.rows[0].blocked_from.toISOString()).toBe('2026-06-08T13:50:00.000Z');
    expect(row.rows[0].blocked_to.toISOString()).toBe('2026-06-08T14:40:00.000Z');
    expect(await startsOn()).not.toContain('14:00');
    await sys.publish(bookingEvent('booking.cancelled', t.ws, { ...b, status: 'cancelled', version: 2 }));
    await until((s) => s.includes('14:00'));
  });

  it('a Booking of another workspace never blocks this workspace\'s host', async () => {
    const other = mk('07:00', '07:30');
    const e = bookingEvent('booking.created', 'wsp_anotherworkspace0000000', other, blocked('06:50', '07:40'));
    await sys.publish(e);
    await rowAt(other.id, 1);
    expect(await startsOn()).toContain('07:00');
  });
});

describe('POST /internal/v1/workspaces/{ws}/slot-check', () => {
  const check = (json: unknown, ws = t.ws) => call(sys.serviceUrl, 'POST', `/internal/v1/workspaces/${ws}/slot-check`, { json });

  it('answers bookable with host, end, blocked range and meeting type for a start the Slots query returns', async () => {
    const res = await check({ event_type_id: evt, start_at: '2026-06-08T09:00:00Z' });
    expect(res.status).toBe(200);
    expect(slotCheckResponseSchema.parse(res.body.data)).toEqual({
      bookable: true,
      event_type_id: evt,
      host_id: hostId,
      start_at: '2026-06-08T09:00:00.000Z',
      end_at: '2026-06-08T09:30:00.000Z',
      blocked_from: '2026-06-08T08:50:00.000Z',
      blocked_to: '2026-06-08T09:40:00.000Z',
      meeting_type: 'video',
    });
  });

  it('at create: refuses a start another Booking blocks, one off the grid and one outside availability (slot_unavailable)', async () => {
    const b = mk('12:00', '12:30');
    const e = bookingEvent('booking.created', t.ws, b, blocked('11:50', '12:40'));
    await sys.publish(e);
    await rowAt(b.id, 1);
    for (const start of ['2026-06-08T12:30:00Z', '2026-06-08T09:10:00Z', '2026-06-08T15:00:00Z']) {
      expect((await check({ event_type_id: evt, start_at: start })).body.data).toEqual({ bookable: false, reason: 'slot_unavailable' });
    }
    // At reschedule the Booking's own time does not block its new time (nor its own start).
    for (const start of ['2026-06-08T12:30:00Z', '2026-06-08T12:00:00Z']) {
      expect((await check({ event_type_id: evt, start_at: start, exclude_booking_id: b.id })).body.data.bookable).toBe(true);
    }
    expect((await check({ event_type_id: evt, start_at: '2026-06-08T12:30:00Z', exclude_booking_id: newId('bkg') })).body.data.bookable).toBe(false);
  });

  it('answers not_found for an unknown Event Type and for one of another workspace, and event_type_not_bookable for an inactive one', async () => {
    expect((await check({ event_type_id: 'evt_neverexisted000000000000', start_at: '2026-06-08T09:00:00Z' })).body.data).toEqual({ bookable: false, reason: 'not_found' });
    const t2 = await Tenant.create(sys);
    expect((await check({ event_type_id: evt, start_at: '2026-06-08T09:00:00Z' }, t2.ws)).body.data).toEqual({ bookable: false, reason: 'not_found' });
    const inactive = await t.eventType(hostId, { status: 'inactive' });
    expect((await check({ event_type_id: inactive, start_at: '2026-06-08T09:00:00Z' })).body.data).toEqual({ bookable: false, reason: 'event_type_not_bookable' });
  });

  it('fails closed with 503 calendar_unavailable when busy times cannot be read', async () => {
    sys.calendar.behave(hostId, { kind: 'status', status: 503, retryAfter: '3' });
    try {
      const res = await check({ event_type_id: evt, start_at: '2026-06-08T09:00:00Z' });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('3');
      expect(res.body.error.code).toBe('calendar_unavailable');
    } finally {
      sys.calendar.behave(hostId, { kind: 'busy', intervals: [] });
    }
  });

  it('refuses a malformed request with 400 naming the field', async () => {
    const res = await check({ event_type_id: evt, start_at: '2026-06-08T09:00:00+02:00', extra: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual(expect.arrayContaining([{ field: 'start_at', issue: 'invalid_format' }, { field: 'extra', issue: 'unknown_field' }]));
  });
});

describe('POST /internal/v1/workspaces/{ws}/slot-checks (several checks, one call)', () => {
  const checks = (json: unknown, ws = t.ws) => call(sys.serviceUrl, 'POST', `/internal/v1/workspaces/${ws}/slot-checks`, { json });
  const single = (json: unknown) => call(sys.serviceUrl, 'POST', `/internal/v1/workspaces/${t.ws}/slot-check`, { json });

  it('answers one entry per check, in order, each what slot-check answers for it alone; a calendar that cannot be read is that check\'s error only', async () => {
    const other = await t.bookable(); // another host, whose calendar is down below
    const items = [
      { event_type_id: evt, start_at: '2026-06-08T09:00:00Z', request_id: 'req_first' },
      { event_type_id: 'evt_neverexisted000000000000', start_at: '2026-06-08T09:00:00Z', request_id: 'req_second' },
      { event_type_id: other.eventTypeId, start_at: '2026-06-08T09:30:00Z' },
      { event_type_id: evt, start_at: '2026-06-08T09:10:00Z' },
      { event_type_id: evt, start_at: '2026-06-09T13:00:00Z', exclude_booking_id: newId('bkg') },
    ];
    const alone = [];
    for (const { request_id: _id, ...item } of items) alone.push((await single(item)).body.data);
    sys.calendar.behave(other.hostId, { kind: 'status', status: 503, retryAfter: '3' });
    try {
      const res = await checks({ checks: items });
      expect(res.status).toBe(200);
      const answers = slotChecksResponseSchema.parse(res.body.data);
      expect(answers).toEqual([alone[0], alone[1], { error: { code: 'calendar_unavailable', message: expect.any(String), retry_after_seconds: 3 } }, alone[3], alone[4]]);
      expect(answers.map((a) => ('error' in a ? 'error' : a.bookable))).toEqual([true, false, 'error', false, true]);
      // The log names every check's request id; the credential only carried one.
      await waitFor(() => sys.logs.find((l) => l.includes('"slot checks"') && l.includes('req_second')) ?? null);
    } finally {
      sys.calendar.behave(other.hostId, { kind: 'busy', intervals: [] });
    }
  });

  it('refuses an empty batch, one over the bound and a malformed check with 400', async () => {
    const one = { event_type_id: evt, start_at: '2026-06-08T09:00:00Z' };
    for (const body of [{ checks: [] }, { checks: Array.from({ length: SLOT_CHECKS_MAX + 1 }, () => one) }, { checks: [one, { ...one, start_at: 'soon' }] }, { checks: [one], extra: 1 }, [one]]) {
      const res = await checks(body);
      expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
    }
    expect((await checks({ checks: Array.from({ length: SLOT_CHECKS_MAX }, () => one) })).body.data).toHaveLength(SLOT_CHECKS_MAX);
  });
});

describe('internal Event Type lookups (invitation service and booking page)', () => {
  it('answer the admin form with `access`, by id and by slug, and 404 for another workspace or an unknown slug', async () => {
    const host = await t.host();
    const id = await t.eventType(host, { slug: 'vip-call', access: 'invitation_only' });
    const byId = await call(sys.serviceUrl, 'GET', `/internal/v1/workspaces/${t.ws}/event-types/${id}`);
    expect(byId.status).toBe(200);
    expect(byId.body.data).toMatchObject({ id, slug: 'vip-call', access: 'invitation_only' });
    const bySlug = await call(sys.serviceUrl, 'GET', `/internal/v1/workspaces/${t.ws}/event-types/by-slug/vip-call`);
    expect(bySlug.body.data.id).toBe(id);
    const other = await Tenant.create(sys);
    expect((await call(sys.serviceUrl, 'GET', `/internal/v1/workspaces/${other.ws}/event-types/${id}`)).status).toBe(404);
    expect((await call(sys.serviceUrl, 'GET', `/internal/v1/workspaces/${t.ws}/event-types/by-slug/no-such`)).status).toBe(404);
  });
});
