import fc from 'fast-check';
import { toLocalTimestamp } from '@sched/contracts';
import { listSlots } from '../src/domain/find-slots';
import { addDays } from '../src/domain/local-time';
import { everyDay, memorySources, WS } from './support/memory-sources';

const EVT = 'evt_AAAAAAAAAAAAAAAAAAAAAA';
const NOW = new Date('2026-01-01T00:00:00.000Z');
const hourly = { durationMinutes: 60, slotIntervalMinutes: 60 };

async function slots(sources: ReturnType<typeof memorySources>, from: string, to: string, timezone: string) {
  return listSlots(sources, WS, EVT, { from, to, timezone }, NOW);
}

describe('DST: a Europe/Berlin host working 09:00–17:00 every day', () => {
  const berlin = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly: everyDay('09:00', '17:00'), overrides: [] }, eventType: hourly });

  it('keeps 09:00–17:00 local around the spring change (2026-03-29): 8 slots a day, UTC starts move by an hour', async () => {
    const result = await slots(berlin, '2026-03-28', '2026-03-30', 'Europe/Berlin');
    expect(result).toHaveLength(24);
    const byDate = (d: string) => result.filter((s) => s.local_start_at.startsWith(d));
    for (const d of ['2026-03-28', '2026-03-29', '2026-03-30']) {
      expect(byDate(d).map((s) => s.local_start_at.slice(11, 16))).toEqual(['09:00', '10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00']);
    }
    expect(byDate('2026-03-28')[0]).toMatchObject({ start_at: '2026-03-28T08:00:00.000Z', local_start_at: '2026-03-28T09:00:00.000+01:00' });
    expect(byDate('2026-03-29')[0]).toMatchObject({ start_at: '2026-03-29T07:00:00.000Z', local_start_at: '2026-03-29T09:00:00.000+02:00' });
    expect(byDate('2026-03-29')[7]).toMatchObject({ end_at: '2026-03-29T15:00:00.000Z', local_end_at: '2026-03-29T17:00:00.000+02:00', timezone: 'Europe/Berlin' });
  });

  it('keeps 09:00–17:00 local around the autumn change (2026-10-25)', async () => {
    const result = await slots(berlin, '2026-10-24', '2026-10-25', 'Europe/Berlin');
    expect(result).toHaveLength(16);
    expect(result[0]).toMatchObject({ start_at: '2026-10-24T07:00:00.000Z', local_start_at: '2026-10-24T09:00:00.000+02:00' });
    expect(result[8]).toMatchObject({ start_at: '2026-10-25T08:00:00.000Z', local_start_at: '2026-10-25T09:00:00.000+01:00' });
  });

  it('shows the same Slots to an America/New_York viewer, in New York time (EDT already since 2026-03-08)', async () => {
    const result = await slots(berlin, '2026-03-29', '2026-03-29', 'America/New_York');
    // The New York date 2026-03-29 is [04:00Z, 04:00Z next day): Berlin's whole 29th, none of its 30th.
    expect(result.map((s) => s.start_at)).toEqual((await slots(berlin, '2026-03-29', '2026-03-29', 'Europe/Berlin')).map((s) => s.start_at));
    expect(result[0]).toMatchObject({ local_start_at: '2026-03-29T03:00:00.000-04:00', local_end_at: '2026-03-29T04:00:00.000-04:00', timezone: 'America/New_York' });
  });

  it('between the two changes (Berlin already back on CET, New York still on EDT) the gap is 5 hours', async () => {
    const result = await slots(berlin, '2026-10-26', '2026-10-26', 'America/New_York');
    expect(result[0]).toMatchObject({ start_at: '2026-10-26T08:00:00.000Z', local_start_at: '2026-10-26T04:00:00.000-04:00' });
  });
});

describe('DST: days of 23 and 25 hours', () => {
  const allDay = (tz: string) => memorySources({ hostTimezone: tz, schedule: { weekly: everyDay('00:00', '24:00'), overrides: [] }, eventType: hourly });

  it('a Berlin host available 00:00–24:00 has 23 hourly Slots on 2026-03-29 and 25 on 2026-10-25', async () => {
    const spring = await slots(allDay('Europe/Berlin'), '2026-03-29', '2026-03-29', 'Europe/Berlin');
    expect(spring).toHaveLength(23);
    expect(spring.map((s) => s.local_start_at.slice(11, 16))).not.toContain('02:00');
    const autumn = await slots(allDay('Europe/Berlin'), '2026-10-25', '2026-10-25', 'Europe/Berlin');
    expect(autumn).toHaveLength(25);
    // The repeated hour appears twice, once per offset.
    expect(autumn.filter((s) => s.local_start_at.slice(11, 16) === '02:00').map((s) => s.local_start_at)).toEqual([
      '2026-10-25T02:00:00.000+02:00',
      '2026-10-25T02:00:00.000+01:00',
    ]);
  });

  it('a New York viewer asking for 2026-11-01 gets a 25-hour window and 2026-03-08 a 23-hour one (UTC host, hourly Slots)', async () => {
    const utc = allDay('UTC');
    const long = await slots(utc, '2026-11-01', '2026-11-01', 'America/New_York');
    expect(long).toHaveLength(25);
    expect(long[0]!.local_start_at).toBe('2026-11-01T00:00:00.000-04:00');
    expect(long.slice(1, 3).map((s) => s.local_start_at)).toEqual(['2026-11-01T01:00:00.000-04:00', '2026-11-01T01:00:00.000-05:00']);
    expect(long[24]!.local_start_at).toBe('2026-11-01T23:00:00.000-05:00');
    const short = await slots(utc, '2026-03-08', '2026-03-08', 'America/New_York');
    expect(short).toHaveLength(23);
    expect(short.slice(1, 3).map((s) => s.local_start_at)).toEqual(['2026-03-08T01:00:00.000-05:00', '2026-03-08T03:00:00.000-04:00']);
  });
});

describe('local times that do not exist or happen twice (documented in docs/availability.md)', () => {
  it('an interval starting in the spring-forward gap starts at the change: 02:30–04:00 on 2026-03-29 in Berlin gives 03:00 and 03:30', async () => {
    const src = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly: {}, overrides: [{ date: '2026-03-29', intervals: [{ start: '02:30', end: '04:00' }] }] } });
    const result = await slots(src, '2026-03-29', '2026-03-29', 'Europe/Berlin');
    expect(result.map((s) => s.local_start_at)).toEqual(['2026-03-29T03:00:00.000+02:00', '2026-03-29T03:30:00.000+02:00']);
  });

  it('an interval wholly inside the gap (02:00–02:45) is empty', async () => {
    const src = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly: {}, overrides: [{ date: '2026-03-29', intervals: [{ start: '02:00', end: '02:45' }] }] } });
    expect(await slots(src, '2026-03-28', '2026-03-30', 'Europe/Berlin')).toEqual([]);
  });

  it('an ambiguous start means its first occurrence: 02:30–03:30 on 2026-10-25 spans two real hours', async () => {
    const src = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly: {}, overrides: [{ date: '2026-10-25', intervals: [{ start: '02:30', end: '03:30' }] }] } });
    const result = await slots(src, '2026-10-25', '2026-10-25', 'Europe/Berlin');
    expect(result.map((s) => s.local_start_at)).toEqual([
      '2026-10-25T02:30:00.000+02:00',
      '2026-10-25T02:00:00.000+01:00',
      '2026-10-25T02:30:00.000+01:00',
      '2026-10-25T03:00:00.000+01:00',
    ]);
  });

  it('a viewer whose local midnight does not exist (America/Santiago, 2026-09-06) gets the day from 01:00', async () => {
    const src = memorySources({ hostTimezone: 'UTC', schedule: { weekly: everyDay('00:00', '24:00'), overrides: [] }, eventType: hourly });
    const result = await slots(src, '2026-09-06', '2026-09-06', 'America/Santiago');
    expect(result[0]!.local_start_at).toBe('2026-09-06T01:00:00.000-03:00');
    expect(result).toHaveLength(23);
  });
});

describe('a schedule crossing midnight', () => {
  const weekly = { mon: [{ start: '22:00', end: '24:00' }], tue: [{ start: '00:00', end: '02:00' }] };

  it('22:00–24:00 Monday and 00:00–02:00 Tuesday give continuous Slots, including one that runs across midnight', async () => {
    const src = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly, overrides: [] }, eventType: { durationMinutes: 60, slotIntervalMinutes: 30 } });
    const result = await slots(src, '2026-06-01', '2026-06-02', 'Europe/Berlin');
    expect(result.map((s) => s.local_start_at.slice(0, 16))).toEqual([
      '2026-06-01T22:00',
      '2026-06-01T22:30',
      '2026-06-01T23:00',
      '2026-06-01T23:30',
      '2026-06-02T00:00',
      '2026-06-02T00:30',
      '2026-06-02T01:00',
    ]);
  });

  it('each interval keeps its own grid: with a 45-minute grid Tuesday starts again at 00:00', async () => {
    const src = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly, overrides: [] }, eventType: { durationMinutes: 45, slotIntervalMinutes: 45 } });
    const result = await slots(src, '2026-06-01', '2026-06-02', 'Europe/Berlin');
    expect(result.map((s) => s.local_start_at.slice(11, 16))).toEqual(['22:00', '22:45', '23:30', '00:00', '00:45']);
  });

  it('a viewer in America/New_York sees the Monday-night Slots on Monday afternoon, across their own date', async () => {
    const src = memorySources({ hostTimezone: 'Europe/Berlin', schedule: { weekly, overrides: [] }, eventType: { durationMinutes: 60, slotIntervalMinutes: 60 } });
    const result = await slots(src, '2026-06-01', '2026-06-01', 'America/New_York');
    expect(result.map((s) => s.local_start_at)).toEqual([
      '2026-06-01T16:00:00.000-04:00',
      '2026-06-01T17:00:00.000-04:00',
      '2026-06-01T18:00:00.000-04:00',
      '2026-06-01T19:00:00.000-04:00',
    ]);
  });
});

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'Europe/London',
  'America/New_York',
  'America/Los_Angeles',
  'America/Santiago',
  'America/St_Johns',
  'Australia/Lord_Howe',
  'Australia/Sydney',
  'Asia/Kathmandu',
  'Asia/Tokyo',
  'Pacific/Chatham',
  'Pacific/Kiritimati',
  'Africa/Casablanca',
];

describe('the requested timezone changes only the local fields', () => {
  it('Slots whose start lies in one zone\'s window are the same in any other zone, with local fields equal to toLocalTimestamp', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ZONES),
        fc.constantFrom(...ZONES),
        fc.constantFrom(...ZONES),
        fc.integer({ min: 0, max: 364 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(15, 30, 45, 60),
        async (hostZone, zoneA, zoneB, dayOffset, span, step) => {
          const src = memorySources({
            hostTimezone: hostZone,
            schedule: { weekly: { ...everyDay('08:00', '12:30'), fri: [{ start: '00:00', end: '24:00' }] }, overrides: [] },
            eventType: { durationMinutes: step, slotIntervalMinutes: step },
          });
          const from = addDays('2026-01-01', dayOffset);
          const to = addDays(from, span);
          const inA = await slots(src, from, to, zoneA);
          const inB = await slots(src, addDays(from, -1), addDays(to, 1), zoneB);
          const windowStarts = new Set(inA.map((s) => s.start_at));
          const sameInB = inB.filter((s) => windowStarts.has(s.start_at));
          expect(sameInB.map((s) => [s.start_at, s.end_at])).toEqual(inA.map((s) => [s.start_at, s.end_at]));
          for (const s of [...inA, ...sameInB]) {
            expect(s.local_start_at).toBe(toLocalTimestamp(new Date(s.start_at), s.timezone));
            expect(s.local_end_at).toBe(toLocalTimestamp(new Date(s.end_at), s.timezone));
          }
          // Each of A's Slots starts on one of A's requested local dates.
          for (const s of inA) expect(s.local_start_at.slice(0, 10) >= from && s.local_start_at.slice(0, 10) <= to).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});
