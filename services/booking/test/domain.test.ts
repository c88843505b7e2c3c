import { bookingSchema, DomainError } from '@sched/contracts';
import { applyCalendarResult, decideCalendarChange } from '../src/domain/apply-calendar-result';
import type { BookingRecord } from '../src/domain/booking';
import { toBookingResource } from '../src/domain/booking';
import { cancelBooking, rescheduleBooking } from '../src/domain/change-booking';
import { createBooking, type CreateBookingCommand } from '../src/domain/create-booking';
import type { BookingAnnouncement, BookingCreates, BookingUnitOfWork, CalendarResultUnitOfWork, CreateWrite, CreateWritten, SlotChecker } from '../src/domain/ports';
import { slotRefusal } from '../src/domain/slot-refusal';

const NOW = new Date('2031-01-01T12:00:00.000Z');

function record(over: Partial<BookingRecord> = {}): BookingRecord {
  return {
    id: 'bkg_AAAAAAAAAAAAAAAAAAAAAA',
    workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA',
    status: 'confirmed',
    version: 1,
    source: 'api',
    invitationId: null,
    eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    hostId: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    startAt: new Date('2031-02-01T09:00:00.000Z'),
    endAt: new Date('2031-02-01T09:30:00.000Z'),
    blockedFrom: new Date('2031-02-01T08:50:00.000Z'),
    blockedTo: new Date('2031-02-01T09:40:00.000Z'),
    guest: { name: 'Ada', email: 'ada@example.com', timezone: 'UTC' },
    meetingType: 'video',
    joinUrl: null,
    calendarStatus: 'pending',
    calendarErrorCode: null,
    calendarWrittenAt: null,
    metadata: { b: 1, a: 2 },
    createdAt: NOW,
    rescheduledAt: null,
    cancelledAt: null,
    ...over,
  };
}

describe('toBookingResource', () => {
  it('produces exactly the contract Booking (strict schema), metadata untouched', () => {
    const r = toBookingResource(record());
    expect(bookingSchema.parse(r)).toEqual(r);
    expect(Object.keys(r.metadata)).toEqual(['b', 'a']);
    expect(r.start_at).toBe('2031-02-01T09:00:00.000Z');
  });
});

describe('decideCalendarChange', () => {
  const synced = (version: number, joinUrl: string | null = 'https://m/x') => ({ kind: 'synced' as const, bookingId: 'bkg_x', bookingVersion: version, joinUrl });

  it('ignores results for older versions (stale) and for versions that do not exist yet', () => {
    expect(decideCalendarChange(record({ version: 2 }), synced(1), NOW)).toEqual({ apply: false, reason: 'stale' });
    expect(decideCalendarChange(record({ version: 2 }), synced(3), NOW)).toEqual({ apply: false, reason: 'unknown_version' });
  });

  it('first write of a confirmed Booking: synced, join_url for video, calendar.created; version untouched', () => {
    const d = decideCalendarChange(record(), synced(1), NOW);
    expect(d).toEqual({ apply: true, changes: { calendarStatus: 'synced', calendarErrorCode: null, joinUrl: 'https://m/x', calendarWrittenAt: NOW }, publish: 'calendar.created' });
    expect('version' in (d as { changes: object }).changes).toBe(false);
  });

  it('keeps join_url null for other meeting types, and publishes nothing on later syncs or for a cancelled Booking', () => {
    expect(decideCalendarChange(record({ meetingType: 'in_person' }), synced(1), NOW)).toMatchObject({ changes: { joinUrl: null } });
    expect(decideCalendarChange(record({ calendarWrittenAt: NOW, version: 2 }), synced(2), NOW)).toMatchObject({ apply: true, publish: null });
    expect(decideCalendarChange(record({ status: 'cancelled', version: 2 }), synced(2), NOW)).toMatchObject({ apply: true, publish: null });
    expect(decideCalendarChange(record({ calendarWrittenAt: NOW, calendarStatus: 'synced', joinUrl: 'https://m/x' }), synced(1), NOW)).toEqual({
      apply: false,
      reason: 'unchanged',
    });
  });

  it('sync_failed: failed with the code and calendar.failed, once per code', () => {
    const f = { kind: 'failed' as const, bookingId: 'bkg_x', bookingVersion: 1, errorCode: 'rejected' as const };
    expect(decideCalendarChange(record(), f, NOW)).toEqual({ apply: true, changes: { calendarStatus: 'failed', calendarErrorCode: 'rejected' }, publish: 'calendar.failed' });
    expect(decideCalendarChange(record({ calendarStatus: 'failed', calendarErrorCode: 'rejected' }), f, NOW)).toEqual({ apply: false, reason: 'unchanged' });
  });
});

describe('applyCalendarResult (one locking read, then the calendar fields and their event in one write)', () => {
  /** A unit of work over one locked row that records its writes. */
  const uowOver = (row: BookingRecord | null) => {
    const writes: Array<{ after: BookingRecord; announcement?: BookingAnnouncement }> = [];
    const uow: CalendarResultUnitOfWork = {
      findForUpdate: async () => row,
      writeCalendar: async (after, announcement) => void writes.push(announcement ? { after, announcement } : { after }),
    };
    return { uow, writes };
  };
  const synced = { kind: 'synced' as const, bookingId: 'bkg_AAAAAAAAAAAAAAAAAAAAAA', bookingVersion: 1, joinUrl: 'https://m/x' };

  it('first write of a confirmed Booking: the row with the calendar changes, announced as calendar.created of that Booking', async () => {
    const current = record();
    const { uow, writes } = uowOver(current);
    expect(await applyCalendarResult({ uow, now: NOW }, current.workspaceId, synced)).toMatchObject({ apply: true, publish: 'calendar.created' });
    const after = { ...current, calendarStatus: 'synced' as const, calendarErrorCode: null, joinUrl: 'https://m/x', calendarWrittenAt: NOW };
    expect(writes).toEqual([{ after, announcement: { type: 'calendar.created', booking: after, occurredAt: NOW } }]);
    // Nothing but the calendar fields differs from the locked row.
    expect(toBookingResource(writes[0]!.after)).toEqual({ ...toBookingResource(current), meeting: { type: 'video', join_url: 'https://m/x' }, calendar: { status: 'synced', error_code: null } });
  });

  it('a failure: calendar.failed with the Booking after it and its code; a later sync of a written Booking: the change, no event', async () => {
    const failing = uowOver(record());
    await applyCalendarResult({ uow: failing.uow, now: NOW }, 'w', { kind: 'failed', bookingId: 'b', bookingVersion: 1, errorCode: 'rejected' });
    const failedAfter = { ...record(), calendarStatus: 'failed' as const, calendarErrorCode: 'rejected' as const };
    expect(failing.writes).toEqual([{ after: failedAfter, announcement: { type: 'calendar.failed', booking: failedAfter, errorCode: 'rejected', occurredAt: NOW } }]);

    const written = uowOver(record({ calendarWrittenAt: NOW, calendarStatus: 'pending', version: 2 }));
    await applyCalendarResult({ uow: written.uow, now: NOW }, 'w', { ...synced, bookingVersion: 2 });
    expect(written.writes).toEqual([{ after: record({ calendarWrittenAt: NOW, calendarStatus: 'synced', joinUrl: 'https://m/x', version: 2 }) }]);
  });

  it('writes nothing for a stale, unchanged or unknown Booking', async () => {
    for (const [row, result] of [
      [record({ version: 2 }), synced],
      [record({ calendarWrittenAt: NOW, calendarStatus: 'synced', joinUrl: 'https://m/x' }), synced],
      [null, synced],
    ] as const) {
      const { uow, writes } = uowOver(row);
      expect((await applyCalendarResult({ uow, now: NOW }, 'w', result)).apply).toBe(false);
      expect(writes).toEqual([]);
    }
  });
});

describe('slotRefusal', () => {
  it('maps not_found to 422 invalid_reference at create but slot_unavailable at reschedule', () => {
    expect(slotRefusal('not_found', 'create')).toMatchObject({ code: 'invalid_reference', details: [{ field: 'event_type_id', issue: 'not_found' }] });
    expect(slotRefusal('not_found', 'reschedule').code).toBe('slot_unavailable');
    expect(slotRefusal('event_type_not_bookable', 'create').code).toBe('event_type_not_bookable');
    expect(slotRefusal('slot_unavailable', 'reschedule').code).toBe('slot_unavailable');
  });
});

describe('reschedule and cancel refusals', () => {
  const noSlots: SlotChecker = { check: () => Promise.reject(new Error('must not be asked')) };
  const uowWith = (b: BookingRecord | null): BookingUnitOfWork => ({
    findForUpdate: async () => b,
    update: () => Promise.reject(new Error('must not update')),
    announce: () => Promise.reject(new Error('must not announce')),
  });
  const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: DomainError) => e.code);

  it('checks not found, then cancelled, then the version, all before asking availability', async () => {
    const deps = (b: BookingRecord | null) => ({ slots: noSlots, uow: uowWith(b), now: NOW });
    expect(await codeOf(rescheduleBooking(deps(null), 'w', 'b', { startAt: NOW, expectedVersion: 1 }))).toBe('not_found');
    expect(await codeOf(rescheduleBooking(deps(record({ status: 'cancelled', version: 2 })), 'w', 'b', { startAt: NOW, expectedVersion: 1 }))).toBe('booking_cancelled');
    expect(await codeOf(rescheduleBooking(deps(record({ version: 3 })), 'w', 'b', { startAt: NOW, expectedVersion: 1 }))).toBe('version_conflict');
    expect(await codeOf(cancelBooking(deps(record({ status: 'cancelled' })), 'w', 'b', {}))).toBe('booking_cancelled');
  });
});

describe('createBooking (the create use case: ask the slot, write under the key, outcome)', () => {
  const ws = 'wsp_AAAAAAAAAAAAAAAAAAAAAA';
  const startAt = new Date('2031-02-01T09:00:00.000Z');
  const KEY = { id: 'key-row-1', lockKey: '42', fingerprint: 'fp-1' };
  const command = (over: Partial<CreateBookingCommand> = {}): CreateBookingCommand => ({
    workspaceId: ws,
    input: { source: 'api', invitationId: null, eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA', startAt, guest: { name: 'Ada', email: 'ada@example.com', timezone: 'UTC' }, metadata: { z: 1 } },
    key: KEY,
    requestId: 'req_now',
    ...over,
  });
  const bookable = {
    bookable: true as const,
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: '2031-02-01T09:00:00.000Z',
    end_at: '2031-02-01T09:30:00.000Z',
    blocked_from: '2031-02-01T08:50:00.000Z',
    blocked_to: '2031-02-01T09:40:00.000Z',
    meeting_type: 'video' as const,
  };
  /** A store that records what it was asked to write and answers as told. */
  const store = (answer: (w: CreateWrite) => CreateWritten) => {
    const writes: CreateWrite[] = [];
    const creates: BookingCreates = { write: async (w) => (writes.push(w), answer(w)) };
    return { writes, creates };
  };
  const deps = (slots: SlotChecker, creates: BookingCreates) => ({ slots, creates, clock: () => NOW });
  const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: DomainError) => e.code);

  it('bookable: asks once, writes the confirmed Booking (version 1, calendar pending) with its booking.created, answers created', async () => {
    const asked: unknown[] = [];
    const s = store(() => ({ kind: 'created', answer: '{"stored":"answer"}' }));
    const outcome = await createBooking(deps({ check: async (w, r) => (asked.push([w, r]), bookable) }, s.creates), command());
    expect(asked).toEqual([[ws, { eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA', startAt }]]);
    expect(s.writes).toHaveLength(1);
    const w = s.writes[0]!;
    expect(w).toMatchObject({ kind: 'insert', workspaceId: ws, key: KEY, requestId: 'req_now' });
    const booking = (w as Extract<CreateWrite, { kind: 'insert' }>).booking;
    expect(booking).toMatchObject({ status: 'confirmed', version: 1, calendarStatus: 'pending', hostId: bookable.host_id, blockedFrom: new Date(bookable.blocked_from), createdAt: NOW, metadata: { z: 1 } });
    expect((w as Extract<CreateWrite, { kind: 'insert' }>).announcement).toEqual({ type: 'booking.created', booking, occurredAt: NOW });
    // The answer stored under the key goes back as it is: the route sends those bytes.
    expect(outcome).toEqual({ kind: 'created', booking, answer: '{"stored":"answer"}' });
  });

  it('another create won the slot after the check: 409 slot_unavailable', async () => {
    expect(await codeOf(createBooking(deps({ check: async () => bookable }, store(() => ({ kind: 'slot_taken' })).creates), command()))).toBe('slot_unavailable');
  });

  it('a refusal is written under the key (stored), then thrown: 422 invalid_reference, 409 event_type_not_bookable / slot_unavailable', async () => {
    for (const [reason, code] of [['not_found', 'invalid_reference'], ['event_type_not_bookable', 'event_type_not_bookable'], ['slot_unavailable', 'slot_unavailable']] as const) {
      const s = store(() => ({ kind: 'refused' }));
      expect(await codeOf(createBooking(deps({ check: async () => ({ bookable: false, reason }) }, s.creates), command()))).toBe(code);
      expect(s.writes).toEqual([expect.objectContaining({ kind: 'refuse', key: KEY, refusal: expect.objectContaining({ code }) })]);
    }
  });

  it('a failed check is written as a failure (nothing stored) and only then thrown, as the check failed', async () => {
    const down = new DomainError('calendar_unavailable', { retryAfterSeconds: 5 });
    const s = store(() => ({ kind: 'failed' }));
    await expect(createBooking(deps({ check: () => Promise.reject(down) }, s.creates), command())).rejects.toBe(down);
    expect(s.writes).toEqual([expect.objectContaining({ kind: 'fail', failure: down })]);
  });

  it('a finished request under the key wins over whatever the check says now: replayed, or 422 for another body', async () => {
    const stored = { status: 201, body: JSON.stringify({ data: { id: 'bkg_X' }, meta: { request_id: 'req_first' } }), fingerprint: 'fp-1', sealed: false };
    const down = new DomainError('calendar_unavailable');
    for (const slots of [{ check: () => Promise.reject(down) }, { check: async () => ({ bookable: false as const, reason: 'slot_unavailable' as const }) }, { check: async () => bookable }]) {
      const outcome = await createBooking(deps(slots, store(() => ({ kind: 'found', row: stored })).creates), command());
      expect(outcome).toEqual({ kind: 'replayed', answer: { status: 201, body: { data: { id: 'bkg_X' }, meta: { request_id: 'req_now' } }, replayed: true, headers: { 'Idempotent-Replayed': 'true' } } });
    }
    const other = store(() => ({ kind: 'found', row: { ...stored, fingerprint: 'fp-other' } }));
    expect(await codeOf(createBooking(deps({ check: async () => bookable }, other.creates), command()))).toBe('idempotency_key_reused');
  });

  it('a request under the key running now: 409 idempotency_request_in_progress with Retry-After 1', async () => {
    const err = await createBooking(deps({ check: async () => bookable }, store(() => ({ kind: 'in_progress' })).creates), command()).catch((e: DomainError) => e);
    expect(err).toMatchObject({ code: 'idempotency_request_in_progress', retryAfterSeconds: 1 });
  });

  it('without a key the write carries none', async () => {
    const s = store(() => ({ kind: 'created' }));
    await createBooking(deps({ check: async () => bookable }, s.creates), command({ key: undefined }));
    expect(s.writes[0]!.key).toBeUndefined();
  });
});
