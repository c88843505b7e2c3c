import type { HostSchedule } from '../src/domain/availability-resolver';
import { addDays, DAY_MS, MINUTE_MS, startOfLocalDate } from '../src/domain/local-time';
import type { Interval } from '../src/domain/slot-engine';

/** The benchmark's scenario: 31 local dates, a 30-minute grid, 500 calendar busy intervals, 1,000 Bookings. */
export const BENCH = { timezone: 'Europe/Berlin', dates: 31, busy: 500, bookings: 1000, durationMinutes: 30, gridMinutes: 30 } as const;

/** Small seeded PRNG (mulberry32), so every run measures the same data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Fixture {
  from: string;
  to: string;
  schedule: HostSchedule;
  /** Calendar busy time, as calendar-sync would answer it. */
  busy: Interval[];
  /** Blocked ranges of existing Bookings: distinct half hours, never overlapping (as the booking service guarantees). */
  bookings: Interval[];
}

export function makeFixture(from: string, seed = 42): Fixture {
  const random = rng(seed);
  const to = addDays(from, BENCH.dates - 1);
  const start = startOfLocalDate(BENCH.timezone, from);
  const halfHours = (BENCH.dates * DAY_MS) / (30 * MINUTE_MS);
  const positions = [...Array(halfHours).keys()];
  for (let i = positions.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [positions[i], positions[j]] = [positions[j]!, positions[i]!];
  }
  const bookings = positions.slice(0, BENCH.bookings).map((p) => ({ start: start + p * 30 * MINUTE_MS, end: start + (p + 1) * 30 * MINUTE_MS }));
  const busy = Array.from({ length: BENCH.busy }, () => {
    const s = start + Math.floor(random() * BENCH.dates * 24 * 60) * MINUTE_MS;
    return { start: s, end: s + (15 + Math.floor(random() * 76)) * MINUTE_MS };
  });
  const day = [{ start: '07:00', end: '22:00' }];
  return { from, to, schedule: { weekly: { mon: day, tue: day, wed: day, thu: day, fri: day, sat: day, sun: day }, overrides: [] }, busy, bookings };
}

/** The p-th percentile (0..100) of samples, nearest rank. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
