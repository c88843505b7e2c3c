import fc from 'fast-check';
import { findSlotStarts, forbiddenStarts, isCandidateStart, mergeIntervals, overlapsMerged, prepareAvailability, type Interval, type SlotEngineInput } from '../src/domain/slot-engine';

const MIN = 60_000;
const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const at = (minutes: number) => T0 + minutes * MIN;
const iv = (from: number, to: number): Interval => ({ start: at(from), end: at(to) });

function input(over: Partial<SlotEngineInput>): SlotEngineInput {
  return {
    availability: [iv(9 * 60, 17 * 60)],
    busy: [],
    durationMs: 30 * MIN,
    stepMs: 30 * MIN,
    bufferBeforeMs: 0,
    bufferAfterMs: 0,
    minimumNoticeMs: 0,
    maximumAdvanceMs: 365 * 24 * 60 * MIN,
    now: T0 - 24 * 60 * MIN,
    window: { start: T0 - 24 * 60 * MIN, end: T0 + 3 * 24 * 60 * MIN },
    ...over,
  };
}

const minutesOf = (starts: number[]) => starts.map((s) => (s - T0) / MIN);

/**
 * The definition of a Slot (decisions.md §8), checked by brute force minute by minute: the oracle the
 * real engine must agree with. Availability lies on whole minutes, so scanning minutes sees every grid
 * point; busy intervals and `now` may be any millisecond.
 */
function oracle(inp: SlotEngineInput): number[] {
  const out: number[] = [];
  if (inp.availability.length === 0) return out;
  const lo = Math.min(...inp.availability.map((a) => a.start));
  const hi = Math.max(...inp.availability.map((a) => a.end));
  const available = (t: number) => inp.availability.some((a) => a.start <= t && t < a.end);
  for (let s = lo; s < hi; s += MIN) {
    const onGrid = inp.availability.some((a) => a.start <= s && s < a.end && (s - a.start) % inp.stepMs === 0);
    if (!onGrid) continue;
    let inside = true;
    for (let t = s; t < s + inp.durationMs; t += MIN) if (!available(t)) inside = false;
    if (!inside) continue;
    const from = s - inp.bufferBeforeMs;
    const to = s + inp.durationMs + inp.bufferAfterMs;
    if (inp.busy.some((b) => from < b.end && to > b.start)) continue;
    if (s < inp.now + inp.minimumNoticeMs || s > inp.now + inp.maximumAdvanceMs) continue;
    if (s < inp.window.start || s >= inp.window.end) continue;
    out.push(s);
  }
  return out;
}

describe('slot engine: examples', () => {
  it('puts a 30-minute meeting on a 30-minute grid across a 09:00–17:00 day: 16 starts, the last at 16:30', () => {
    const starts = minutesOf(findSlotStarts(input({})));
    expect(starts).toHaveLength(16);
    expect(starts[0]).toBe(540);
    expect(starts[15]).toBe(990);
  });

  it('keeps a meeting inside availability: a 60-minute meeting on a 45-minute grid stops at 15:45', () => {
    const starts = minutesOf(findSlotStarts(input({ durationMs: 60 * MIN, stepMs: 45 * MIN })));
    expect(starts).toEqual([540, 585, 630, 675, 720, 765, 810, 855, 900, 945]);
  });

  it('refuses a start whose blocked range touches busy time only when it overlaps (touching is free)', () => {
    // Busy 12:00–13:00, 10-minute buffers on both sides, 30-minute meetings.
    const starts = minutesOf(findSlotStarts(input({ busy: [iv(720, 780)], bufferBeforeMs: 10 * MIN, bufferAfterMs: 10 * MIN, stepMs: 10 * MIN })));
    // 11:20 ends 11:50, blocked to 12:00: touches, allowed. 11:30 blocked to 12:10: overlaps.
    expect(starts).toContain(680);
    expect(starts).not.toContain(690);
    // 13:00 is blocked from 12:50: overlaps. 13:10 blocked from 13:00: touches, allowed.
    expect(starts).not.toContain(780);
    expect(starts).toContain(790);
  });

  it('lets buffers reach outside availability: a 09:00 start with a 15-minute buffer before is fine when 08:45 is free', () => {
    const starts = minutesOf(findSlotStarts(input({ bufferBeforeMs: 15 * MIN })));
    expect(starts[0]).toBe(540);
  });

  it('lets a meeting run across touching intervals (22:00–24:00 and 00:00–02:00) with each interval keeping its own grid', () => {
    const availability = [iv(22 * 60, 24 * 60), iv(24 * 60, 26 * 60)];
    expect(minutesOf(findSlotStarts(input({ availability, durationMs: 60 * MIN, stepMs: 30 * MIN })))).toEqual([1320, 1350, 1380, 1410, 1440, 1470, 1500]);
    // A 45-minute grid restarts at midnight: 23:15 is the first interval's last start, 00:00 the second's first.
    expect(minutesOf(findSlotStarts(input({ availability, durationMs: 45 * MIN, stepMs: 45 * MIN })))).toEqual([1320, 1365, 1410, 1440, 1485]);
  });

  it('applies minimum notice and maximum advance inclusively', () => {
    const now = at(8 * 60);
    const starts = minutesOf(findSlotStarts(input({ now, minimumNoticeMs: 120 * MIN, maximumAdvanceMs: 360 * MIN })));
    expect(starts[0]).toBe(600);
    expect(starts[starts.length - 1]).toBe(840);
  });

  it('returns only starts inside the window [start, end)', () => {
    const starts = minutesOf(findSlotStarts(input({ window: iv(600, 660) })));
    expect(starts).toEqual([600, 630]);
  });

  it('returns nothing when notice pushes the first start past the window', () => {
    expect(findSlotStarts(input({ now: at(0), minimumNoticeMs: 10_000 * MIN }))).toEqual([]);
  });

  it('merges busy intervals and the ranges of starts they forbid', () => {
    expect(mergeIntervals([iv(5, 6), iv(1, 2), iv(2, 3), iv(4, 4)])).toEqual([iv(1, 3), iv(5, 6)]);
    // Busy [60, 70) with duration 30, after 5, before 10 forbids starts in (25, 80).
    expect(forbiddenStarts([iv(60, 70)], { durationMs: 30 * MIN, bufferAfterMs: 5 * MIN, bufferBeforeMs: 10 * MIN })).toEqual([{ start: at(25) + 1, end: at(80) }]);
  });

  it('rejects a zero grid step instead of looping forever', () => {
    expect(() => findSlotStarts(input({ stepMs: 0 }))).toThrow(RangeError);
  });
});

const minutes = (max: number) => fc.integer({ min: 0, max });
/** Mostly whole minutes, so edges touch exactly (the off-by-one cases), sometimes any millisecond. */
const msOrMinute = (min: number, max: number) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.integer({ min: Math.ceil(min / 15), max: Math.floor(max / 15) }).map((q) => q * 15 * MIN) },
    { weight: 2, arbitrary: fc.integer({ min, max }).map((m) => m * MIN) },
    { weight: 1, arbitrary: fc.integer({ min: min * MIN, max: max * MIN }) },
  );
/** Mostly the grid steps people use, so grid points meet busy edges; sometimes any step. */
const gridStep = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(5, 10, 15, 20, 30, 45, 60) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 120 }) });
const aligned = (max: number) => fc.oneof(fc.integer({ min: 0, max: max / 15 }).map((q) => q * 15), minutes(max));

/** Random engine inputs on a three-day span; availability on whole minutes, busy and now on any ms. */
const engineInput = fc
  .record({
    availability: fc.array(fc.tuple(aligned(3 * 1440), fc.integer({ min: 1, max: 600 })), { maxLength: 6 }),
    busy: fc.array(fc.tuple(msOrMinute(-120, 3 * 1440), msOrMinute(1, 300)), { maxLength: 12 }),
    duration: fc.integer({ min: 1, max: 240 }),
    step: gridStep,
    before: fc.oneof(fc.constantFrom(0, 5, 10, 15), fc.integer({ min: 0, max: 60 })),
    after: fc.oneof(fc.constantFrom(0, 5, 10, 15), fc.integer({ min: 0, max: 60 })),
    notice: fc.integer({ min: 0, max: 2 * 1440 }),
    advance: fc.integer({ min: 1, max: 4 * 1440 }),
    now: msOrMinute(-1440, 2 * 1440),
    window: fc.tuple(minutes(3 * 1440), minutes(3 * 1440)),
  })
  .map(
    (r): SlotEngineInput => ({
      availability: r.availability.map(([s, len]) => iv(s, s + len)),
      busy: r.busy.map(([s, len]) => ({ start: T0 + s, end: T0 + s + len })),
      durationMs: r.duration * MIN,
      stepMs: r.step * MIN,
      bufferBeforeMs: r.before * MIN,
      bufferAfterMs: r.after * MIN,
      minimumNoticeMs: r.notice * MIN,
      maximumAdvanceMs: r.advance * MIN,
      now: T0 + r.now,
      window: iv(Math.min(...r.window), Math.max(...r.window) + 1),
    }),
  );

describe('slot engine: properties against the brute-force oracle', () => {
  it('returns exactly the starts the minute-by-minute definition allows: none invalid, none missing', () => {
    fc.assert(
      fc.property(engineInput, (inp) => {
        expect(findSlotStarts(inp)).toEqual(oracle(inp));
      }),
      { numRuns: 500 },
    );
  });

  it('every start is on a grid, inside availability, off every busy interval with buffers, within notice/advance, ascending', () => {
    fc.assert(
      fc.property(engineInput, (inp) => {
        const starts = findSlotStarts(inp);
        const union = mergeIntervals(inp.availability);
        starts.forEach((s, i) => {
          if (i > 0) expect(s).toBeGreaterThan(starts[i - 1]!);
          expect(inp.availability.some((a) => a.start <= s && s < a.end && (s - a.start) % inp.stepMs === 0)).toBe(true);
          expect(union.some((u) => u.start <= s && s + inp.durationMs <= u.end)).toBe(true);
          for (const b of inp.busy) expect(s - inp.bufferBeforeMs < b.end && s + inp.durationMs + inp.bufferAfterMs > b.start).toBe(false);
          expect(s).toBeGreaterThanOrEqual(inp.now + inp.minimumNoticeMs);
          expect(s).toBeLessThanOrEqual(inp.now + inp.maximumAdvanceMs);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('does not depend on the order of its inputs', () => {
    fc.assert(
      fc.property(engineInput, (inp) => {
        const reversed = { ...inp, availability: [...inp.availability].reverse(), busy: [...inp.busy].reverse() };
        expect(findSlotStarts(reversed)).toEqual(findSlotStarts(inp));
      }),
      { numRuns: 100 },
    );
  });
});

describe('slot engine: one start at a time (the slot check)', () => {
  /** A start worth asking about: a grid point of an interval (often), an edge of one or of a busy interval, or any millisecond. */
  const startOf = (inp: SlotEngineInput) => {
    const points = [...inp.availability.flatMap((a) => [a.start, a.end, a.end - inp.durationMs]), ...inp.busy.flatMap((b) => [b.start, b.end])];
    const grid = inp.availability.length > 0 ? fc.tuple(fc.constantFrom(...inp.availability), fc.integer({ min: -2, max: 40 })).map(([a, k]) => a.start + k * inp.stepMs) : fc.constant(T0);
    // A grid point next to busy time, where buffers and edges decide.
    const nearBusy =
      inp.availability.length > 0 && inp.busy.length > 0
        ? fc
            .tuple(fc.constantFrom(...inp.availability), fc.constantFrom(...inp.busy), fc.boolean(), fc.integer({ min: -3, max: 3 }))
            .map(([a, b, atEnd, k]) => a.start + (Math.floor(((atEnd ? b.end : b.start) - a.start) / inp.stepMs) + k) * inp.stepMs)
        : grid;
    return fc.oneof(
      { weight: 3, arbitrary: grid },
      { weight: 3, arbitrary: nearBusy },
      { weight: 2, arbitrary: points.length > 0 ? fc.constantFrom(...points).chain((p) => fc.integer({ min: -1, max: 1 }).map((d) => p + d * MIN)) : fc.constant(T0) },
      { weight: 1, arbitrary: fc.integer({ min: T0 - 1440 * MIN, max: T0 + 4 * 1440 * MIN }) },
    );
  };
  /** Busy time as the check gets it: sometimes with empty intervals, which block nothing. */
  const withEmpty = (inp: SlotEngineInput) => fc.array(msOrMinute(-120, 3 * 1440), { maxLength: 2 }).map((at) => [...inp.busy, ...at.map((a) => ({ start: T0 + a, end: T0 + a }))]);

  it('isCandidateStart and overlapsMerged answer exactly what findSlotStarts answers for the window [s, s + 1)', () => {
    let bookable = 0;
    let refusedByBusy = 0;
    fc.assert(
      fc.property(
        engineInput
          // Often without notice and advance in the way, so availability and busy time decide.
          .chain((inp) => fc.constantFrom(inp, { ...inp, now: T0 - 2 * 1440 * MIN, minimumNoticeMs: 0, maximumAdvanceMs: 10 * 1440 * MIN }))
          .chain((inp) => fc.tuple(fc.constant(inp), startOf(inp), withEmpty(inp))),
        ([inp, s, busy]) => {
          const full = findSlotStarts({ ...inp, busy, window: { start: s, end: s + 1 } });
          const candidate = isCandidateStart(prepareAvailability(inp.availability), inp, inp.now, s);
          expect(candidate).toBe(findSlotStarts({ ...inp, busy: [], window: { start: s, end: s + 1 } }).length === 1);
          const blocked = overlapsMerged(mergeIntervals(busy), { start: s - inp.bufferBeforeMs, end: s + inp.durationMs + inp.bufferAfterMs });
          expect(candidate && !blocked ? [s] : []).toEqual(full);
          if (full.length === 1) bookable++;
          else if (candidate) refusedByBusy++;
        },
      ),
      { numRuns: 3000 },
    );
    // Not vacuous: bookable starts and candidates refused by busy time both came up (about 190 and 60 of the 3,000).
    expect(bookable).toBeGreaterThan(50);
    expect(refusedByBusy).toBeGreaterThan(20);
  });

  it('finds the grid of the segment that holds the start when segments overlap, and refuses a start no segment holds on its grid', () => {
    const rules = input({ stepMs: 30 * MIN, durationMs: 15 * MIN });
    const prepared = prepareAvailability([iv(540, 1020), iv(600, 610), iv(545, 700)]);
    expect(isCandidateStart(prepared, rules, rules.now, at(545 + 30))).toBe(true); // 09:35 on 09:05's grid
    expect(isCandidateStart(prepared, rules, rules.now, at(570))).toBe(true); // 09:30 on 09:00's grid
    expect(isCandidateStart(prepared, rules, rules.now, at(600))).toBe(true);
    expect(isCandidateStart(prepared, rules, rules.now, at(555))).toBe(false);
    expect(isCandidateStart(prepared, rules, rules.now, at(1020 - 10))).toBe(false); // the meeting would end after 17:00
    expect(() => isCandidateStart(prepared, { ...rules, stepMs: 0 }, rules.now, at(600))).toThrow(RangeError);
  });
});
