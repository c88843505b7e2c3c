import { makeBooking } from '@sched/testing';
import { bookingEvent, bookingIdFromUid, bookingEventUid, joinUrlFor } from '../../src/domain/booking-event';
import { busyIntervals, busyItemsFrom, covers, isFresh, mergeIntervals, snapshotRange, toIntervals } from '../../src/domain/busy-times';
import { calendarErrorCode, isConnectionBroken } from '../../src/domain/connection-status';

const d = (s: string) => new Date(s);
const iv = (a: string, b: string) => ({ start: d(a), end: d(b) });

describe('busy items from calendar events', () => {
  it('keeps opaque events and drops transparent, cancelled and zero-length ones', () => {
    const items = busyItemsFrom([
      { uid: 'a', timing: { kind: 'instant', start: d('2026-12-01T10:00:00Z'), end: d('2026-12-01T11:00:00Z') }, transparent: false, cancelled: false },
      { uid: 'b', timing: { kind: 'instant', start: d('2026-12-01T12:00:00Z'), end: d('2026-12-01T13:00:00Z') }, transparent: true, cancelled: false },
      { uid: 'c', timing: { kind: 'instant', start: d('2026-12-01T14:00:00Z'), end: d('2026-12-01T15:00:00Z') }, transparent: false, cancelled: true },
      { uid: 'd', timing: { kind: 'instant', start: d('2026-12-01T16:00:00Z'), end: d('2026-12-01T16:00:00Z') }, transparent: false, cancelled: false },
      { uid: 'e', timing: { kind: 'date', start: '2026-12-02', end: '2026-12-03' }, transparent: false, cancelled: false },
    ]);
    expect(items).toEqual([
      { uid: 'a', kind: 'instant', start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T11:00:00.000Z' },
      { uid: 'e', kind: 'date', start: '2026-12-02', end: '2026-12-03' },
    ]);
  });

  it('places an all-day event on the host-local day, including a 25-hour DST day', () => {
    const [normal, dstEnd] = toIntervals(
      [
        { uid: 'x', kind: 'date', start: '2026-12-02', end: '2026-12-03' },
        { uid: 'y', kind: 'date', start: '2026-10-25', end: '2026-10-26' },
      ],
      'Europe/Paris',
    );
    expect(normal).toEqual(iv('2026-12-01T23:00:00Z', '2026-12-02T23:00:00Z'));
    // Paris leaves summer time on 2026-10-25: that local day starts at +02:00 and ends at +01:00.
    expect(dstEnd).toEqual(iv('2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z'));
  });

  it('reads floating times in the host zone', () => {
    expect(toIntervals([{ uid: 'f', kind: 'floating', start: '2026-12-02T09:00:00', end: '2026-12-02T10:00:00' }], 'America/New_York')).toEqual([
      iv('2026-12-02T14:00:00Z', '2026-12-02T15:00:00Z'),
    ]);
  });

  it('merges overlapping and touching intervals and keeps only those overlapping the window', () => {
    expect(
      mergeIntervals([iv('2026-12-01T11:00:00Z', '2026-12-01T12:00:00Z'), iv('2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z'), iv('2026-12-01T10:30:00Z', '2026-12-01T10:45:00Z'), iv('2026-12-01T13:00:00Z', '2026-12-01T14:00:00Z')]),
    ).toEqual([iv('2026-12-01T10:00:00Z', '2026-12-01T12:00:00Z'), iv('2026-12-01T13:00:00Z', '2026-12-01T14:00:00Z')]);

    const items = [
      { uid: 'keep', kind: 'instant' as const, start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T11:00:00.000Z' },
      { uid: 'bkg_aaaaaaaaaaaaaaaaaaaaaa@scheduling-service', kind: 'instant' as const, start: '2026-12-01T12:00:00.000Z', end: '2026-12-01T13:00:00.000Z' },
      { uid: 'outside', kind: 'instant' as const, start: '2026-12-03T10:00:00.000Z', end: '2026-12-03T11:00:00.000Z' },
    ];
    expect(
      busyIntervals(items, {
        timeZone: 'UTC',
        window: iv('2026-12-01T00:00:00Z', '2026-12-02T00:00:00Z'),
        excludeUids: new Set(['bkg_aaaaaaaaaaaaaaaaaaaaaa@scheduling-service']),
      }),
    ).toEqual([iv('2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z')]);
  });
});

describe('snapshot range and freshness', () => {
  it('caches from the start of yesterday (UTC) to N days after today, the same all day long', () => {
    expect(snapshotRange(d('2026-11-22T13:45:00Z'), 90)).toEqual(iv('2026-11-21T00:00:00Z', '2027-02-21T00:00:00Z'));
    expect(snapshotRange(d('2026-11-22T00:00:00Z'), 90)).toEqual(snapshotRange(d('2026-11-22T23:59:59Z'), 90));
  });

  it('covers only windows fully inside, and is fresh up to the bound', () => {
    const range = iv('2026-11-21T00:00:00Z', '2027-02-21T00:00:00Z');
    expect(covers(range, iv('2026-11-22T00:00:00Z', '2026-12-22T00:00:00Z'))).toBe(true);
    expect(covers(range, iv('2027-02-20T00:00:00Z', '2027-02-22T00:00:00Z'))).toBe(false);
    expect(isFresh(d('2026-11-22T10:00:00Z'), d('2026-11-22T10:05:00Z'), 300_000)).toBe(true);
    expect(isFresh(d('2026-11-22T10:00:00Z'), d('2026-11-22T10:05:00.001Z'), 300_000)).toBe(false);
  });
});

describe('Booking events', () => {
  const booking = makeBooking({
    id: 'bkg_AAAAAAAAAAAAAAAAAAAAAA',
    version: 3,
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: '2026-12-01T10:00:00.000Z',
    guest: { name: 'Gina', email: 'gina@example.com', timezone: 'Europe/Berlin' },
  });

  it('derives UID and object name from the Booking id only, and recognises its own UIDs', () => {
    const ev = bookingEvent(booking, null);
    expect(ev).toMatchObject({ uid: 'bkg_AAAAAAAAAAAAAAAAAAAAAA@scheduling-service', objectName: 'bkg_AAAAAAAAAAAAAAAAAAAAAA.ics', sequence: 3 });
    expect(bookingIdFromUid(bookingEventUid(booking.id))).toBe(booking.id);
    expect(bookingIdFromUid('bkg_AAAAAAAAAAAAAAAAAAAAAA@elsewhere')).toBeNull();
    expect(bookingIdFromUid('someone-else@scheduling-service')).toBeNull();
  });

  it('fills the join URL from the template for video only, and keeps one the Booking already has', () => {
    expect(joinUrlFor(booking, 'https://meet.example.com/{booking_id}')).toBe(`https://meet.example.com/${booking.id}`);
    expect(joinUrlFor(booking, null)).toBeNull();
    expect(joinUrlFor({ ...booking, meeting: { type: 'phone', join_url: null } }, 'https://meet.example.com/{booking_id}')).toBeNull();
    expect(joinUrlFor({ ...booking, meeting: { type: 'video', join_url: 'https://old.example.com/x' } }, 'https://new.example.com/{booking_id}')).toBe('https://old.example.com/x');
  });

  it('maps provider failures to the decisions.md §6 codes; only persistent ones break the connection', () => {
    expect(calendarErrorCode('unavailable')).toBe('provider_unavailable');
    expect(calendarErrorCode('auth_failed')).toBe('auth_failed');
    expect(calendarErrorCode('not_calendar_server')).toBe('calendar_not_found');
    expect(calendarErrorCode('rejected')).toBe('rejected');
    expect(isConnectionBroken('unavailable')).toBe(false);
    expect(isConnectionBroken('rejected')).toBe(false);
    expect(isConnectionBroken('auth_failed')).toBe(true);
    // A revoked OAuth grant (invalid_grant): decisions.md §6 has no code of its own, the connection breaks.
    expect(calendarErrorCode('reauthorization_required')).toBe('auth_failed');
    expect(isConnectionBroken('reauthorization_required')).toBe(true);
  });
});
