import { BusyReader } from '../../src/domain/busy-reader';
import type { CalendarProvider } from '../../src/domain/calendar-provider';
import type { Connection, Snapshot, Store } from '../../src/domain/ports';

const now = new Date('2026-12-01T08:00:00Z');
const conn: Connection = {
  id: 'cal_1',
  workspaceId: 'wsp_1',
  hostId: 'hst_1',
  provider: 'caldav',
  url: 'http://cal.example',
  username: 'u',
  passwordSealed: 'sealed',
  calendarUrl: 'http://cal.example/u/c/',
  hostTimezone: 'Europe/Paris',
  conferencingUrlTemplate: null,
  status: 'connected',
  errorCode: null,
  createdAt: now,
  updatedAt: now,
};
const bookingId = 'bkg_AAAAAAAAAAAAAAAAAAAAAA';
// One snapshot object, handed out again on every call (as the in-process cache does).
const snapshot: Snapshot = {
  connectionId: 'cal_1',
  range: { start: new Date('2026-11-30T00:00:00Z'), end: new Date('2027-03-01T00:00:00Z') },
  fetchedAt: now,
  changeMarker: 'ctag:1',
  items: [
    { uid: 'external', kind: 'instant', start: '2026-12-02T09:00:00.000Z', end: '2026-12-02T10:00:00.000Z' },
    { uid: `${bookingId}@scheduling-service`, kind: 'instant', start: '2026-12-02T12:00:00.000Z', end: '2026-12-02T13:00:00.000Z' },
    { uid: 'allday', kind: 'date', start: '2026-12-03', end: '2026-12-04' },
  ],
};

describe('BusyReader answers from an unchanged snapshot', () => {
  it('follow a change of which Bookings are own, and of the host zone, though the items are the same', async () => {
    let own = new Set<string>();
    let zone = 'Europe/Paris';
    const store = {
      findConnection: async () => ({ ...conn, hostTimezone: zone }),
      noteQueried: async () => undefined,
      getSnapshot: async () => snapshot,
      ownBookingIds: async () => own,
    } as unknown as Store;
    const reader = new BusyReader(
      { store, provider: {} as CalendarProvider, sealer: { seal: (s) => s, open: (s) => s }, hosts: { getHost: async () => null } },
      { freshnessMs: 300_000, snapshotDays: 90, retryAfterSeconds: 5 },
    );
    const ask = async (from: string, to: string) =>
      (await reader.busy({ workspaceId: 'wsp_1', hostId: 'hst_1', window: { start: new Date(from), end: new Date(to) }, now })).intervals;

    expect(await ask('2026-12-02T00:00:00Z', '2026-12-03T00:00:00Z')).toEqual([
      { start_at: '2026-12-02T09:00:00.000Z', end_at: '2026-12-02T10:00:00.000Z' },
      { start_at: '2026-12-02T12:00:00.000Z', end_at: '2026-12-02T13:00:00.000Z' }, // not (yet) this host's own Booking
      { start_at: '2026-12-02T23:00:00.000Z', end_at: '2026-12-03T23:00:00.000Z' },
    ]);
    own = new Set([bookingId]);
    expect(await ask('2026-12-02T00:00:00Z', '2026-12-03T00:00:00Z')).toEqual([
      { start_at: '2026-12-02T09:00:00.000Z', end_at: '2026-12-02T10:00:00.000Z' },
      { start_at: '2026-12-02T23:00:00.000Z', end_at: '2026-12-03T23:00:00.000Z' },
    ]);
    // Another window of the same snapshot.
    expect(await ask('2026-12-03T12:00:00Z', '2026-12-03T13:00:00Z')).toEqual([{ start_at: '2026-12-02T23:00:00.000Z', end_at: '2026-12-03T23:00:00.000Z' }]);
    zone = 'Asia/Tokyo';
    expect(await ask('2026-12-03T12:00:00Z', '2026-12-03T13:00:00Z')).toEqual([{ start_at: '2026-12-02T15:00:00.000Z', end_at: '2026-12-03T15:00:00.000Z' }]);
  });
});
