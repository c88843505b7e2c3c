import { DomainError } from '@sched/contracts';
import { bookabilityOf } from '../src/domain/event-type';
import { checkSlot, listSlots } from '../src/domain/find-slots';
import { everyDay, memorySources, WS } from './support/memory-sources';

const EVT = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const NOW = new Date('2026-06-01T06:00:00.000Z');
const at = (s: string) => Date.parse(s);
const schedule = { weekly: everyDay('09:00', '12:00'), overrides: [] };
const query = { from: '2026-06-02', to: '2026-06-02', timezone: 'UTC' };

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
}

describe('bookable and unavailable_reason (decisions.md §7)', () => {
  it('reports the first reason that applies, in the order inactive, calendar_not_connected, calendar_error, no_availability', () => {
    expect(bookabilityOf({ status: 'inactive', calendarStatus: null, hostHasAvailability: false })).toEqual({ bookable: false, unavailableReason: 'inactive' });
    expect(bookabilityOf({ status: 'active', calendarStatus: null, hostHasAvailability: false })).toEqual({ bookable: false, unavailableReason: 'calendar_not_connected' });
    expect(bookabilityOf({ status: 'active', calendarStatus: 'disconnected', hostHasAvailability: true }).unavailableReason).toBe('calendar_not_connected');
    expect(bookabilityOf({ status: 'active', calendarStatus: 'error', hostHasAvailability: false }).unavailableReason).toBe('calendar_error');
    expect(bookabilityOf({ status: 'active', calendarStatus: 'connected', hostHasAvailability: false }).unavailableReason).toBe('no_availability');
    expect(bookabilityOf({ status: 'active', calendarStatus: 'connected', hostHasAvailability: true })).toEqual({ bookable: true, unavailableReason: null });
  });
});

describe('listSlots', () => {
  it('answers 404 for an unknown Event Type and 409 event_type_not_bookable for one that is not bookable', async () => {
    const src = memorySources({ hostTimezone: 'UTC', schedule });
    expect(await codeOf(listSlots(src, WS, 'evt_other', query, NOW))).toBe('not_found');
    expect(await codeOf(listSlots(src, 'wsp_other', EVT, query, NOW))).toBe('not_found');
    const inactive = memorySources({ hostTimezone: 'UTC', schedule, eventType: { status: 'inactive' } });
    expect(await codeOf(listSlots(inactive, WS, EVT, query, NOW))).toBe('event_type_not_bookable');
  });

  it('treats calendar-sync knowing no connection as not bookable (409), and a calendar that cannot be read as 503', async () => {
    expect(await codeOf(listSlots(memorySources({ hostTimezone: 'UTC', schedule, calendar: 'not_connected' }), WS, EVT, query, NOW))).toBe('event_type_not_bookable');
    expect(await codeOf(listSlots(memorySources({ hostTimezone: 'UTC', schedule, calendar: 'unavailable' }), WS, EVT, query, NOW))).toBe('calendar_unavailable');
  });

  it('excludes calendar busy time and other Bookings\' blocked ranges', async () => {
    const src = memorySources({
      hostTimezone: 'UTC',
      schedule,
      calendar: [{ start: at('2026-06-02T09:00:00Z'), end: at('2026-06-02T09:45:00Z') }],
      bookings: [{ id: 'bkg_1', start: at('2026-06-02T10:30:00Z'), end: at('2026-06-02T11:00:00Z') }],
    });
    const result = await listSlots(src, WS, EVT, query, NOW);
    expect(result.map((s) => s.start_at.slice(11, 16))).toEqual(['10:00', '11:00', '11:30']);
  });

  it('asks calendar-sync only for the span the candidate Slots can touch, and not at all when there is none', async () => {
    const src = memorySources({ hostTimezone: 'UTC', schedule, eventType: { bufferBeforeMinutes: 15, bufferAfterMinutes: 5 } });
    await listSlots(src, WS, EVT, query, NOW);
    expect(src.calendarCalls).toEqual([{ start: at('2026-06-02T08:45:00Z'), end: at('2026-06-02T12:05:00Z') }]);
    await listSlots(src, WS, EVT, { from: '2026-05-01', to: '2026-05-02', timezone: 'UTC' }, NOW); // all in the past
    expect(src.calendarCalls).toHaveLength(1);
  });
});

describe('checkSlot (the booking service\'s check)', () => {
  const booked = [{ id: 'bkg_mine', start: at('2026-06-02T09:50:00Z'), end: at('2026-06-02T10:40:00Z') }];
  const src = memorySources({ hostTimezone: 'UTC', schedule, bookings: booked, eventType: { bufferBeforeMinutes: 10, bufferAfterMinutes: 10, meetingType: 'phone' } });

  it('answers bookable with host, end, blocked range and meeting type for a start the Slots query returns', async () => {
    expect(await checkSlot(src, WS, { eventTypeId: EVT, startAt: new Date('2026-06-02T11:00:00Z') }, NOW)).toEqual({
      bookable: true,
      event_type_id: EVT,
      host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
      start_at: '2026-06-02T11:00:00.000Z',
      end_at: '2026-06-02T11:30:00.000Z',
      blocked_from: '2026-06-02T10:50:00.000Z',
      blocked_to: '2026-06-02T11:40:00.000Z',
      meeting_type: 'phone',
    });
  });

  it('refuses a start off the grid, outside availability, in the past or blocked by another Booking', async () => {
    for (const start of ['2026-06-02T11:10:00Z', '2026-06-02T12:00:00Z', '2026-05-30T09:00:00Z', '2026-06-02T10:30:00Z', '2026-06-02T11:00:00.001Z']) {
      expect(await checkSlot(src, WS, { eventTypeId: EVT, startAt: new Date(start) }, NOW)).toEqual({ bookable: false, reason: 'slot_unavailable' });
    }
  });

  it('does not let the Booking being rescheduled block its own new time', async () => {
    const startAt = new Date('2026-06-02T10:30:00Z');
    expect((await checkSlot(src, WS, { eventTypeId: EVT, startAt, excludeBookingId: 'bkg_mine' }, NOW)).bookable).toBe(true);
    expect((await checkSlot(src, WS, { eventTypeId: EVT, startAt, excludeBookingId: 'bkg_other' }, NOW)).bookable).toBe(false);
  });

  it('answers not_found and event_type_not_bookable as reasons, and throws 503 when the calendar cannot be read', async () => {
    expect(await checkSlot(src, WS, { eventTypeId: 'evt_nope', startAt: new Date('2026-06-02T11:00:00Z') }, NOW)).toEqual({ bookable: false, reason: 'not_found' });
    const noCal = memorySources({ hostTimezone: 'UTC', schedule, eventType: { calendarStatus: 'error' } });
    expect(await checkSlot(noCal, WS, { eventTypeId: EVT, startAt: new Date('2026-06-02T11:00:00Z') }, NOW)).toEqual({ bookable: false, reason: 'event_type_not_bookable' });
    const down = memorySources({ hostTimezone: 'UTC', schedule, calendar: 'unavailable' });
    expect(await codeOf(checkSlot(down, WS, { eventTypeId: EVT, startAt: new Date('2026-06-02T11:00:00Z') }, NOW))).toBe('calendar_unavailable');
  });

  it('agrees with listSlots on every start of a day: a start is bookable exactly when the Slots query returns it', async () => {
    const listed = new Set((await listSlots(src, WS, EVT, query, NOW)).map((s) => s.start_at));
    for (let m = 8 * 60; m < 13 * 60; m += 5) {
      const startAt = new Date(at('2026-06-02T00:00:00Z') + m * 60_000);
      const answer = await checkSlot(src, WS, { eventTypeId: EVT, startAt }, NOW);
      expect(answer.bookable).toBe(listed.has(startAt.toISOString()));
    }
  });
});
