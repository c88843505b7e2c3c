import { bookingSchema, DomainError } from '@sched/contracts';
import { decideCalendarChange } from '../src/domain/apply-calendar-result';
import type { BookingRecord } from '../src/domain/booking';
import { toBookingResource } from '../src/domain/booking';
import { cancelBooking, rescheduleBooking } from '../src/domain/change-booking';
import { answeredSlotChecker, askSlot } from '../src/domain/create-booking';
import type { BookingUnitOfWork, SlotChecker } from '../src/domain/ports';
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
    insert: () => Promise.reject(new Error('no')),
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

describe('askSlot + answeredSlotChecker (the create asks availability before opening its transaction)', () => {
  const ws = 'wsp_AAAAAAAAAAAAAAAAAAAAAA';
  const question = { eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA', startAt: new Date('2031-02-01T09:00:00.000Z') };
  /** What the create route does: ask once, then hand the answer to the one-request path as a SlotChecker. */
  const checkSlotAhead = async (slots: SlotChecker, w: string, q: typeof question) => answeredSlotChecker(slots, w, q, await askSlot(slots, w, q));

  it('asks once, then answers the same question from that answer', async () => {
    const asked: unknown[] = [];
    const slots: SlotChecker = { check: async (w, r) => (asked.push([w, r]), { bookable: false, reason: 'slot_unavailable' }) };
    const ahead = await checkSlotAhead(slots, ws, question);
    expect(asked).toHaveLength(1);
    await expect(ahead.check(ws, { ...question, startAt: new Date(question.startAt) })).resolves.toEqual({ bookable: false, reason: 'slot_unavailable' });
    expect(asked).toHaveLength(1);
  });

  it('keeps a failed check instead of throwing it at once, and throws it only when the create asks', async () => {
    const down = new DomainError('calendar_unavailable', { retryAfterSeconds: 5 });
    const ahead = await checkSlotAhead({ check: async () => Promise.reject(down) }, ws, question);
    await expect(ahead.check(ws, question)).rejects.toBe(down);
  });

  it('asks afresh for any other question', async () => {
    let calls = 0;
    const slots: SlotChecker = { check: async () => (calls++, { bookable: false, reason: 'not_found' }) };
    const ahead = await checkSlotAhead(slots, ws, question);
    await ahead.check(ws, { ...question, startAt: new Date('2031-02-01T10:00:00.000Z') });
    await ahead.check('wsp_BBBBBBBBBBBBBBBBBBBBBB', question);
    await ahead.check(ws, { ...question, excludeBookingId: 'bkg_AAAAAAAAAAAAAAAAAAAAAA' });
    expect(calls).toBe(4);
  });
});
