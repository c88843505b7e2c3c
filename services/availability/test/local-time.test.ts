import fc from 'fast-check';
import { fromZonedTime, getTimezoneOffset } from 'date-fns-tz';
import { toLocalTimestamp } from '@sched/contracts';
import { formatLocal, HOUR_MS, localDateOf, offsetAt, startOfLocalDate, toWall, wallToInstant } from '../src/domain/local-time';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'Africa/Casablanca', 'America/St_Johns'];
const wall = (s: string) => Date.parse(`${s}Z`);
const iso = (t: number) => new Date(t).toISOString();

describe('offsets and local display', () => {
  it('formatLocal writes exactly what contracts toLocalTimestamp writes, for any instant and zone', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: Date.parse('1990-01-01'), max: Date.parse('2040-01-01') }), (tz, t) => {
        expect(formatLocal(tz, t)).toBe(toLocalTimestamp(new Date(t), tz));
      }),
      { numRuns: 2000 },
    );
  });

  it('knows the new offset in the hour right after a spring-forward change, where date-fns-tz getTimezoneOffset still answers the old one', () => {
    const t = Date.parse('2026-03-29T01:30:00.000Z'); // 03:30 CEST
    expect(offsetAt('Europe/Berlin', t)).toBe(2 * HOUR_MS);
    // Why offsets are not taken from getTimezoneOffset: it reads its date as a Berlin wall time (01:30, before the change).
    expect(getTimezoneOffset('Europe/Berlin', new Date(t))).toBe(1 * HOUR_MS);
  });
});

describe('wallToInstant: the first instant the local clock reads a time', () => {
  it('agrees with date-fns-tz fromZonedTime for ordinary local times', () => {
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-06-01T09:00:00')))).toBe(fromZonedTime('2026-06-01 09:00', 'Europe/Berlin').toISOString());
    expect(iso(wallToInstant('America/New_York', wall('2026-01-15T17:30:00')))).toBe(fromZonedTime('2026-01-15 17:30', 'America/New_York').toISOString());
  });

  it('maps a time in the spring-forward gap to the change itself (fromZonedTime would shift it an hour later)', () => {
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-03-29T02:30:00')))).toBe('2026-03-29T01:00:00.000Z');
    expect(fromZonedTime('2026-03-29 02:30', 'Europe/Berlin').toISOString()).toBe('2026-03-29T00:30:00.000Z');
  });

  it('maps an ambiguous fall-back time to its first occurrence (fromZonedTime picks the second)', () => {
    expect(iso(wallToInstant('Europe/Berlin', wall('2026-10-25T02:30:00')))).toBe('2026-10-25T00:30:00.000Z');
    expect(fromZonedTime('2026-10-25 02:30', 'Europe/Berlin').toISOString()).toBe('2026-10-25T01:30:00.000Z');
  });

  it('is monotonic, never lands before the time asked, and lands exactly on it whenever the time exists', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: Date.parse('2000-01-01'), max: Date.parse('2035-01-01') }), fc.integer({ min: 0, max: 3 * HOUR_MS }), (tz, w, d) => {
        const a = wallToInstant(tz, w);
        const b = wallToInstant(tz, w + d);
        expect(b).toBeGreaterThanOrEqual(a);
        expect(toWall(tz, a)).toBeGreaterThanOrEqual(w);
        // One millisecond earlier the clock read less: a is the first such instant.
        expect(toWall(tz, a - 1)).toBeLessThan(w);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('local dates', () => {
  it('starts a date at midnight, or at the end of a gap that swallows midnight (America/Santiago 2026-09-06)', () => {
    expect(iso(startOfLocalDate('Europe/Berlin', '2026-03-29'))).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(startOfLocalDate('America/Santiago', '2026-09-06'))).toBe('2026-09-06T04:00:00.000Z');
    expect(localDateOf('America/Santiago', Date.parse('2026-09-06T04:00:00.000Z'))).toBe('2026-09-06');
    expect(localDateOf('America/Santiago', Date.parse('2026-09-06T03:59:59.999Z'))).toBe('2026-09-05');
  });
});
