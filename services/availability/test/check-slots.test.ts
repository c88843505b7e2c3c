import fc from 'fast-check';
import { DomainError, MS_PER_DAY } from '@sched/contracts';
import type { HostSchedule } from '../src/domain/availability-resolver';
import type { EventTypeView } from '../src/domain/event-type';
import { checkSlot, checkSlots, type SlotCheckInput, type SlotCheckOutcome, type SlotContext, type SlotSources } from '../src/domain/find-slots';
import type { Interval } from '../src/domain/slot-engine';
import { everyDay, eventTypeView, WS } from './support/memory-sources';

/**
 * checkSlots (the slot-checks batch) against checkSlot (one check alone): the same answer for every
 * check, fewer reads.
 */

const NOW = new Date('2026-06-01T06:00:00.000Z');
const MIN = 60_000;
const at = (s: string) => Date.parse(s);
const hostIdOf = (n: number) => `hst_${String(n).padStart(22, 'H')}`;
const evtIdOf = (n: number) => `evt_${String(n).padStart(22, 'E')}`;

interface Booked extends Interval {
  id: string;
}

interface HostWorld {
  timezone: string;
  schedule: HostSchedule;
  /** Calendar busy time; or no connection; or the UTC days (since NOW's) on which it cannot be read. */
  calendar: Interval[] | 'not_connected';
  failingDays: number[];
  retryAfterSeconds: number;
  bookings: Booked[];
}

interface World {
  hosts: HostWorld[];
  eventTypes: EventTypeView[];
}

/** What each read was asked: the shared reads are what the batch saves. */
interface Reads {
  loadContext: string[];
  calendarBusy: Array<{ hostId: string; range: Interval }>;
  bookedIntervals: Array<{ hostId: string; range: Interval; exclude?: string }>;
}

const DAY0 = Math.floor(NOW.getTime() / MS_PER_DAY);
/** The days after NOW's the checks, Bookings and busy time fall on. */
const DAYS = 4;
/** Some checks fall on FAR_DAY instead, so one batch needs host dates that are not consecutive. */
const FAR_DAY = 12;

/** SlotSources over a World, answering as the real ones do: what overlaps the range asked about. */
function worldSources(world: World, opts: { storeDown?: boolean } = {}): SlotSources & { reads: Reads } {
  const reads: Reads = { loadContext: [], calendarBusy: [], bookedIntervals: [] };
  const hostOf = (hostId: string) => world.hosts[world.hosts.findIndex((_, i) => hostIdOf(i) === hostId)];
  return {
    reads,
    loadContext: async (ws, id) => {
      reads.loadContext.push(id);
      const eventType = world.eventTypes.find((e) => e.id === id);
      if (ws !== WS || !eventType) return null;
      const host = hostOf(eventType.hostId)!;
      const ctx: SlotContext = { eventType, hostTimezone: host.timezone, schedule: host.schedule };
      return ctx;
    },
    bookedIntervals: async (_ws, hostId, range, exclude) => {
      reads.bookedIntervals.push({ hostId, range, ...(exclude && { exclude }) });
      if (opts.storeDown) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return hostOf(hostId)!.bookings.filter((b) => b.id !== exclude && b.start < range.end && b.end > range.start).map(({ start, end }) => ({ start, end }));
    },
    calendarBusy: async (_ws, hostId, range) => {
      reads.calendarBusy.push({ hostId, range });
      const host = hostOf(hostId)!;
      if (host.calendar === 'not_connected') return 'not_connected';
      // Unreadable on some UTC days: a read touching one of them fails (calendar-sync's 503, fail closed).
      for (let day = Math.floor(range.start / MS_PER_DAY); day < Math.ceil(range.end / MS_PER_DAY); day++) {
        if (host.failingDays.includes(day - DAY0)) throw new DomainError('calendar_unavailable', { retryAfterSeconds: host.retryAfterSeconds });
      }
      return host.calendar.filter((b) => b.start < range.end && b.end > range.start);
    },
  };
}

/** An outcome in a form toEqual compares fully (an Error compares by message only). */
const plain = (o: SlotCheckOutcome | DomainError) => (o instanceof DomainError ? { error: o.code, retryAfterSeconds: o.retryAfterSeconds } : o);

async function alone(src: SlotSources, checks: readonly SlotCheckInput[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const c of checks) {
    try {
      out.push(plain(await checkSlot(src, WS, c, NOW)));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      out.push(plain(err));
    }
  }
  return out;
}

// ---- generators -------------------------------------------------------------------------------

const ZONES = ['UTC', 'Europe/London', 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland', 'America/St_Johns'];
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
/** An instant within the first `days` days after NOW's UTC day, on a 5-minute grid or anywhere. */
const instant = (days: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: (days * 1440) / 5 }).map((q) => DAY0 * MS_PER_DAY + q * 5 * MIN) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: days * MS_PER_DAY }).map((ms) => DAY0 * MS_PER_DAY + ms) },
  );
const interval = (days: number) => fc.tuple(instant(days), fc.integer({ min: 1, max: 240 })).map(([start, m]) => ({ start, end: start + m * MIN }));

const hostWorld: fc.Arbitrary<HostWorld> = fc.record({
  timezone: fc.constantFrom(...ZONES),
  schedule: fc.oneof(
    { weight: 1, arbitrary: fc.constant({ weekly: everyDay('00:00', '24:00'), overrides: [] }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: 20 * 4 }), fc.integer({ min: 1, max: 16 * 4 }))
        .map(([from, len]) => ({ weekly: everyDay(hhmm(from * 15), hhmm(Math.min(24 * 60, from * 15 + len * 15))), overrides: [] })),
    },
    // Dates of their own: a day off, or two intervals, on some of the days the checks fall on.
    {
      weight: 1,
      arbitrary: fc
        .uniqueArray(
          fc.record({
            day: fc.integer({ min: -1, max: FAR_DAY + 1 }),
            intervals: fc.oneof(
              fc.constant<Array<{ start: string; end: string }>>([]),
              fc.tuple(fc.integer({ min: 0, max: 10 * 4 }), fc.integer({ min: 1, max: 12 * 4 })).map(([from, len]) => [
                { start: hhmm(from * 15), end: hhmm(from * 15 + len * 15) },
                { start: hhmm(from * 15 + len * 15 + 60), end: '24:00' },
              ]),
            ),
          }),
          { selector: (o) => o.day, maxLength: 4 },
        )
        .map((list) => ({
          weekly: everyDay('06:00', '20:00'),
          overrides: list.map((o) => ({ date: new Date((DAY0 + o.day) * MS_PER_DAY).toISOString().slice(0, 10), intervals: o.intervals })),
        })),
    },
  ),
  calendar: fc.oneof({ weight: 6, arbitrary: fc.array(interval(DAYS), { maxLength: 8 }) }, { weight: 1, arbitrary: fc.constant('not_connected' as const) }),
  failingDays: fc.oneof({ weight: 2, arbitrary: fc.constant<number[]>([]) }, { weight: 1, arbitrary: fc.uniqueArray(fc.integer({ min: 0, max: DAYS }), { minLength: 1, maxLength: 2 }) }),
  retryAfterSeconds: fc.integer({ min: 1, max: 30 }),
  bookings: fc.array(interval(DAYS), { maxLength: 10 }).map((list) => list.map((iv, i) => ({ ...iv, id: `bkg_${String(i).padStart(22, 'B')}` }))),
});

const eventTypeOf = (hosts: number) =>
  fc
    .record({
      host: fc.integer({ min: 0, max: hosts - 1 }),
      duration: fc.constantFrom(5, 15, 30, 45, 60, 90),
      step: fc.constantFrom(5, 10, 15, 30, 60),
      before: fc.constantFrom(0, 5, 10, 15, 30),
      after: fc.constantFrom(0, 5, 10, 15, 30),
      notice: fc.constantFrom(0, 60, 24 * 60),
      advance: fc.constantFrom(2 * 1440, 30 * 1440),
      status: fc.constantFrom('active', 'active', 'active', 'inactive' as const),
      calendarStatus: fc.constantFrom('connected', 'connected', 'connected', 'error' as const),
    })
    .map((r) => ({ ...r, hostId: hostIdOf(r.host) }));

const world: fc.Arbitrary<World> = fc.integer({ min: 1, max: 3 }).chain((n) =>
  fc.record({
    hosts: fc.array(hostWorld, { minLength: n, maxLength: n }),
    eventTypes: fc.array(eventTypeOf(n), { minLength: 1, maxLength: 4 }).map((list) =>
      list.map((e, i) =>
        eventTypeView({
          id: evtIdOf(i),
          hostId: e.hostId,
          durationMinutes: e.duration,
          slotIntervalMinutes: e.step,
          bufferBeforeMinutes: e.before,
          bufferAfterMinutes: e.after,
          minimumNoticeMinutes: e.notice,
          maximumAdvanceMinutes: e.advance,
          status: e.status,
          calendarStatus: e.calendarStatus,
        }),
      ),
    ),
  }),
);

/** A check of a world: often at the start or end of one of its host's Bookings, often excluding one (a reschedule). */
const checkOf = (w: World): fc.Arbitrary<SlotCheckInput> =>
  fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: w.eventTypes.length - 1 }) }, { weight: 1, arbitrary: fc.constant(-1) }).chain((n): fc.Arbitrary<SlotCheckInput> => {
    if (n < 0) return fc.record({ eventTypeId: fc.constant('evt_unknownunknownunknown1'), startAt: instant(DAYS).map((ms) => new Date(ms)) });
    const evt = w.eventTypes[n]!;
    const bookings = w.hosts[w.hosts.findIndex((_, i) => hostIdOf(i) === evt.hostId)]!.bookings;
    const far = fc.integer({ min: 0, max: 1440 / 5 }).map((q) => (DAY0 + FAR_DAY) * MS_PER_DAY + q * 5 * MIN);
    const anywhere = fc.record({ eventTypeId: fc.constant(evt.id), startAt: fc.oneof({ weight: 4, arbitrary: instant(DAYS) }, { weight: 1, arbitrary: far }).map((ms) => new Date(ms)) });
    if (bookings.length === 0) return anywhere;
    const booking = fc.constantFrom(...bookings);
    return fc.oneof(
      { weight: 2, arbitrary: anywhere },
      // Next to a Booking, excluding one of them or not.
      {
        weight: 2,
        arbitrary: fc.record({
          eventTypeId: fc.constant(evt.id),
          startAt: fc.tuple(booking, fc.boolean()).map(([b, atEnd]) => new Date(atEnd ? b.end : b.start)),
          excludeBookingId: fc.option(booking.map((b) => b.id), { nil: undefined }),
        }),
      },
      // A Booking moved to its own start: free only with its exclusion.
      { weight: 1, arbitrary: booking.map((b) => ({ eventTypeId: evt.id, startAt: new Date(b.start), excludeBookingId: b.id })) },
    );
  });

const checksOf = (w: World) => fc.array(checkOf(w), { minLength: 1, maxLength: 24 });

// ---- tests ------------------------------------------------------------------------------------

describe('checkSlots: the same answers as checkSlot alone', () => {
  it('answers every check of a random batch exactly as checkSlot answers it alone (hosts, zones, buffers, notice, exclusions, calendars down or not connected)', async () => {
    await fc.assert(
      fc.asyncProperty(
        world.chain((w) => fc.tuple(fc.constant(w), checksOf(w))),
        async ([w, checks]) => {
          const batch = (await checkSlots(worldSources(w), WS, checks, NOW)).map(plain);
          expect(batch).toEqual(await alone(worldSources(w), checks));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('meets bookable starts, every refusal, item errors and exclusions that matter in those batches (the property above is not vacuous)', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        world.chain((w) => fc.tuple(fc.constant(w), checksOf(w))),
        async ([w, checks]) => {
          const src = worldSources(w);
          const answers = await checkSlots(src, WS, checks, NOW);
          for (const [i, o] of answers.entries()) {
            seen.add(o instanceof DomainError ? o.code : o.bookable ? 'bookable' : o.reason);
            const c = checks[i]!;
            if (c.excludeBookingId && !(o instanceof DomainError) && o.bookable) {
              const without = await checkSlot(src, WS, { ...c, excludeBookingId: undefined }, NOW);
              if (!without.bookable) seen.add('bookable only with its exclusion');
            }
          }
        },
      ),
      { numRuns: 400 },
    );
    expect([...seen].sort()).toEqual(['bookable', 'bookable only with its exclusion', 'calendar_unavailable', 'event_type_not_bookable', 'not_found', 'slot_unavailable']);
  });
});

describe('checkSlots: shared reads', () => {
  const schedule = { weekly: everyDay('09:00', '17:00'), overrides: [] };
  const host = (over: Partial<HostWorld> = {}): HostWorld => ({ timezone: 'UTC', schedule, calendar: [], failingDays: [], retryAfterSeconds: 5, bookings: [], ...over });
  const evt = (n: number, hostN: number, over: Partial<EventTypeView> = {}) => eventTypeView({ id: evtIdOf(n), hostId: hostIdOf(hostN), durationMinutes: 5, slotIntervalMinutes: 5, ...over });
  const startsOn = (day: string, count: number, fromHour = 9): SlotCheckInput[] =>
    Array.from({ length: count }, (_, i) => ({ eventTypeId: evtIdOf(0), startAt: new Date(at(`${day}T00:00:00Z`) + fromHour * 60 * MIN + i * 5 * MIN) }));

  it('32 checks of one Event Type on one day: one Event Type read, one calendar read and one projection read, over the span they need', async () => {
    const w: World = { hosts: [host({ bookings: [{ id: 'bkg_taken', start: at('2026-06-02T10:00:00Z'), end: at('2026-06-02T10:05:00Z') }] })], eventTypes: [evt(0, 0)] };
    const src = worldSources(w);
    const checks = startsOn('2026-06-02', 32);
    const answers = await checkSlots(src, WS, checks, NOW);
    expect(src.reads.loadContext).toEqual([evtIdOf(0)]);
    const span = { start: at('2026-06-02T09:00:00Z'), end: at('2026-06-02T11:40:00Z') };
    expect(src.reads.calendarBusy).toEqual([{ hostId: hostIdOf(0), range: span }]);
    expect(src.reads.bookedIntervals).toEqual([{ hostId: hostIdOf(0), range: span }]);
    expect(answers.map((a) => !(a instanceof DomainError) && a.bookable)).toEqual(checks.map((c) => c.startAt.toISOString() !== '2026-06-02T10:00:00.000Z'));
    // Alone: 32 of each.
    const single = worldSources(w);
    await alone(single, checks);
    expect([single.reads.loadContext.length, single.reads.calendarBusy.length, single.reads.bookedIntervals.length]).toEqual([32, 32, 32]);
  });

  it('reads per host and per UTC days: two hosts on two days make four groups; two Event Types of one host share theirs', async () => {
    const w: World = { hosts: [host(), host({ timezone: 'Asia/Tokyo' })], eventTypes: [evt(0, 0), evt(1, 1, { slotIntervalMinutes: 30, durationMinutes: 30 }), evt(2, 0)] };
    const src = worldSources(w);
    const checks: SlotCheckInput[] = [
      { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-02T09:00:00Z') },
      { eventTypeId: evtIdOf(2), startAt: new Date('2026-06-02T12:00:00Z') },
      { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-03T09:00:00Z') },
      { eventTypeId: evtIdOf(1), startAt: new Date('2026-06-02T01:00:00Z') }, // 10:00 in Tokyo
      { eventTypeId: evtIdOf(1), startAt: new Date('2026-06-03T01:30:00Z') },
    ];
    const answers = (await checkSlots(src, WS, checks, NOW)).map(plain);
    expect(answers).toEqual(await alone(worldSources(w), checks));
    expect(answers.every((a) => 'bookable' in a && a.bookable)).toBe(true);
    expect(src.reads.loadContext.sort()).toEqual([evtIdOf(0), evtIdOf(1), evtIdOf(2)]);
    const calendarReads = src.reads.calendarBusy.map((r) => `${r.hostId} ${new Date(r.range.start).toISOString()} ${new Date(r.range.end).toISOString()}`).sort();
    expect(calendarReads).toEqual(
      [
        `${hostIdOf(0)} 2026-06-02T09:00:00.000Z 2026-06-02T12:05:00.000Z`,
        `${hostIdOf(0)} 2026-06-03T09:00:00.000Z 2026-06-03T09:05:00.000Z`,
        `${hostIdOf(1)} 2026-06-02T01:00:00.000Z 2026-06-02T01:30:00.000Z`,
        `${hostIdOf(1)} 2026-06-03T01:30:00.000Z 2026-06-03T02:00:00.000Z`,
      ].sort(),
    );
    expect(src.reads.bookedIntervals).toHaveLength(4);
  });

  it('gives a check excluding a Booking (a reschedule) its own projection read, and shares the calendar read', async () => {
    const mine = { id: 'bkg_mine', start: at('2026-06-02T09:30:00Z'), end: at('2026-06-02T09:35:00Z') };
    const w: World = { hosts: [host({ bookings: [mine] })], eventTypes: [evt(0, 0)] };
    const src = worldSources(w);
    const checks: SlotCheckInput[] = [
      { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-02T09:30:00Z') },
      { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-02T09:30:00Z'), excludeBookingId: 'bkg_mine' },
      { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-02T09:00:00Z') },
    ];
    const answers = (await checkSlots(src, WS, checks, NOW)).map((a) => !(a instanceof DomainError) && a.bookable);
    expect(answers).toEqual([false, true, true]);
    expect(src.reads.calendarBusy).toHaveLength(1);
    expect(src.reads.bookedIntervals).toEqual([
      { hostId: hostIdOf(0), range: { start: at('2026-06-02T09:00:00Z'), end: at('2026-06-02T09:35:00Z') } },
      { hostId: hostIdOf(0), range: { start: at('2026-06-02T09:30:00Z'), end: at('2026-06-02T09:35:00Z') }, exclude: 'bkg_mine' },
    ]);
  });

  it('reads nothing for checks with no candidate start, an unknown Event Type or one that is not bookable', async () => {
    const w: World = { hosts: [host()], eventTypes: [evt(0, 0), evt(1, 0, { status: 'inactive' })] };
    const src = worldSources(w);
    const answers = await checkSlots(
      src,
      WS,
      [
        { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-02T08:00:00Z') }, // outside availability
        { eventTypeId: evtIdOf(0), startAt: new Date('2026-05-30T09:00:00Z') }, // past
        { eventTypeId: evtIdOf(1), startAt: new Date('2026-06-02T09:00:00Z') },
        { eventTypeId: 'evt_nope', startAt: new Date('2026-06-02T09:00:00Z') },
      ],
      NOW,
    );
    expect(answers).toEqual([
      { bookable: false, reason: 'slot_unavailable' },
      { bookable: false, reason: 'slot_unavailable' },
      { bookable: false, reason: 'event_type_not_bookable' },
      { bookable: false, reason: 'not_found' },
    ]);
    expect([src.reads.calendarBusy, src.reads.bookedIntervals]).toEqual([[], []]);
  });
});

describe('checkSlots: failures', () => {
  const schedule = { weekly: everyDay('09:00', '17:00'), overrides: [] };
  const evts = [eventTypeView({ id: evtIdOf(0), hostId: hostIdOf(0) }), eventTypeView({ id: evtIdOf(1), hostId: hostIdOf(1) })];
  const checks: SlotCheckInput[] = [
    { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-02T09:00:00Z') },
    { eventTypeId: evtIdOf(1), startAt: new Date('2026-06-02T09:00:00Z') },
    { eventTypeId: evtIdOf(0), startAt: new Date('2026-06-03T09:00:00Z') },
  ];

  it('a calendar that cannot be read fails only the checks that read it, each with calendar_unavailable and its Retry-After', async () => {
    const w: World = {
      hosts: [
        { timezone: 'UTC', schedule, calendar: [], failingDays: [1], retryAfterSeconds: 7, bookings: [] },
        { timezone: 'UTC', schedule, calendar: [], failingDays: [], retryAfterSeconds: 5, bookings: [] },
      ],
      eventTypes: evts,
    };
    const answers = (await checkSlots(worldSources(w), WS, checks, NOW)).map(plain);
    expect(answers).toEqual([{ error: 'calendar_unavailable', retryAfterSeconds: 7 }, expect.objectContaining({ bookable: true }), expect.objectContaining({ bookable: true })]);
    expect(answers).toEqual(await alone(worldSources(w), checks));
  });

  it('a host without a calendar connection answers its checks event_type_not_bookable', async () => {
    const w: World = {
      hosts: [
        { timezone: 'UTC', schedule, calendar: 'not_connected', failingDays: [], retryAfterSeconds: 5, bookings: [] },
        { timezone: 'UTC', schedule, calendar: [], failingDays: [], retryAfterSeconds: 5, bookings: [] },
      ],
      eventTypes: evts,
    };
    const answers = await checkSlots(worldSources(w), WS, checks, NOW);
    expect(answers.map((a) => !(a instanceof DomainError) && (a.bookable || a.reason))).toEqual(['event_type_not_bookable', true, 'event_type_not_bookable']);
  });

  it('the store down fails the whole batch, as it fails checkSlot', async () => {
    const w: World = { hosts: [1, 2].map(() => ({ timezone: 'UTC', schedule, calendar: [], failingDays: [], retryAfterSeconds: 5, bookings: [] })), eventTypes: evts };
    await expect(checkSlots(worldSources(w, { storeDown: true }), WS, checks, NOW)).rejects.toThrow('ECONNREFUSED');
    await expect(checkSlot(worldSources(w, { storeDown: true }), WS, checks[0]!, NOW)).rejects.toThrow('ECONNREFUSED');
  });
});
