/**
 * The slot engine (decisions.md §8), a pure function over instants in epoch milliseconds.
 *
 * A start s is a Slot when
 * 1. it is on the grid of an availability interval: s = origin + k·step with origin <= s < end;
 * 2. the meeting [s, s + duration) lies inside the union of the availability intervals, so a meeting
 *    may run across two touching intervals (22:00–24:00 Monday and 00:00–02:00 Tuesday);
 * 3. its blocked range [s − before, s + duration + after) overlaps no busy interval (calendar busy
 *    time and other confirmed Bookings' blocked ranges, which carry their own buffers already);
 * 4. now + minimum notice <= s <= now + maximum advance;
 * 5. window.start <= s < window.end.
 * Buffers only need to be free, not inside availability: they keep meetings apart, they are not
 * working time, so a 09:00 start with a 10-minute buffer before is fine when 08:50 is free.
 *
 * Cost is O(A log A + B log B + S): busy intervals are merged once and turned into ranges of
 * forbidden starts, then every segment's grid is walked with a binary search to its first candidate
 * and jumps over each forbidden range, never minute by minute.
 */
export interface Interval {
  /** Inclusive, epoch ms. */
  start: number;
  /** Exclusive, epoch ms. */
  end: number;
}

export interface SlotRules {
  durationMs: number;
  /** Grid step from the start of each availability interval. */
  stepMs: number;
  bufferBeforeMs: number;
  bufferAfterMs: number;
  minimumNoticeMs: number;
  maximumAdvanceMs: number;
}

export interface SlotEngineInput extends SlotRules {
  /** Availability intervals as the schedule defines them (each is a grid origin), any order. */
  availability: readonly Interval[];
  /** Busy intervals, any order, may overlap. */
  busy: readonly Interval[];
  now: number;
  /** Only starts in [window.start, window.end) are returned. */
  window: Interval;
}

/** Sorted by start, overlapping and touching intervals joined. Empty intervals are dropped. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) {
      if (i.end > last.end) last.end = i.end;
    } else {
      out.push({ start: i.start, end: i.end });
    }
  }
  return out;
}

/**
 * Starts whose blocked range would overlap a busy interval [b0, b1): exactly the s with
 * b0 − duration − after < s < b1 + before, i.e. the half-open [b0 − duration − after + 1, b1 + before)
 * on integer milliseconds. Busy is merged first, so the result is sorted; it is merged again because
 * widening can make neighbours overlap.
 */
export function forbiddenStarts(busy: readonly Interval[], rules: Pick<SlotRules, 'durationMs' | 'bufferBeforeMs' | 'bufferAfterMs'>): Interval[] {
  const lead = rules.durationMs + rules.bufferAfterMs - 1;
  const out: Interval[] = [];
  for (const b of mergeIntervals(busy)) {
    const start = b.start - lead;
    const end = b.end + rules.bufferBeforeMs;
    const last = out[out.length - 1];
    if (last && start <= last.end) {
      if (end > last.end) last.end = end;
    } else {
      out.push({ start, end });
    }
  }
  return out;
}

/** Index of the first interval whose end is after `t` (the only one that can contain t or lie beyond it). */
function firstEndingAfter(intervals: readonly Interval[], t: number): number {
  let lo = 0;
  let hi = intervals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (intervals[mid]!.end <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The smallest grid point origin + k·step (k >= 0) that is >= t. */
function gridAtOrAfter(origin: number, step: number, t: number): number {
  if (t <= origin) return origin;
  return origin + Math.ceil((t - origin) / step) * step;
}

/** Starts of every Slot, ascending, without duplicates. */
export function findSlotStarts(input: SlotEngineInput): number[] {
  const { durationMs, stepMs } = input;
  if (!(stepMs > 0) || !(durationMs > 0)) throw new RangeError('duration and step must be positive');
  const first = Math.max(input.window.start, input.now + input.minimumNoticeMs);
  const last = Math.min(input.window.end - 1, input.now + input.maximumAdvanceMs);
  if (first > last) return [];

  const union = mergeIntervals(input.availability);
  const forbidden = forbiddenStarts(input.busy, input);
  const segments = input.availability.filter((a) => a.end > a.start && a.end > first && a.start <= last).sort((a, b) => a.start - b.start);

  const starts: number[] = [];
  for (const seg of segments) {
    // The union interval holding this segment bounds how late a meeting may end.
    const holder = union[firstEndingAfter(union, seg.start)];
    if (!holder) continue;
    const latestStart = Math.min(last, seg.end - 1, holder.end - durationMs);
    let s = gridAtOrAfter(seg.start, stepMs, first);
    let f = firstEndingAfter(forbidden, s);
    while (s <= latestStart) {
      while (f < forbidden.length && forbidden[f]!.end <= s) f++;
      const block = forbidden[f];
      if (block && block.start <= s) {
        s = gridAtOrAfter(seg.start, stepMs, block.end);
        continue;
      }
      starts.push(s);
      s += stepMs;
    }
  }
  return sortedUnique(starts);
}

/** Segments never overlap when they come from one schedule, so this is normally a single pass. */
function sortedUnique(values: number[]): number[] {
  let ordered = true;
  for (let i = 1; i < values.length; i++) {
    if (values[i]! <= values[i - 1]!) {
      ordered = false;
      break;
    }
  }
  if (ordered) return values;
  return [...new Set(values)].sort((a, b) => a - b);
}

/**
 * Availability made ready for many single-start questions (isCandidateStart): the slot check asks
 * about one start at a time, so walking whole intervals' grids, as findSlotStarts does, would cost each
 * check the work of every start around it.
 */
export interface PreparedAvailability {
  /** The non-empty availability intervals (each a grid origin), sorted by start. */
  segments: readonly Interval[];
  /** endsUpTo[i]: the latest end among segments[0..i], so a backward walk knows when to stop. */
  endsUpTo: readonly number[];
  /** mergeIntervals of the availability: what a meeting must lie inside. */
  union: readonly Interval[];
}

export function prepareAvailability(availability: readonly Interval[]): PreparedAvailability {
  const segments = availability.filter((a) => a.end > a.start).sort((a, b) => a.start - b.start);
  const endsUpTo: number[] = [];
  let latest = Number.NEGATIVE_INFINITY;
  for (const seg of segments) endsUpTo.push((latest = Math.max(latest, seg.end)));
  return { segments, endsUpTo, union: mergeIntervals(segments) };
}

/**
 * Whether `s` is a Slot start without busy time (rules 1, 2 and 4 of the definition above): exactly
 * when findSlotStarts with `busy: []` and the window [s, s + 1) answers [s]. Cost O(log A) plus the
 * segments that overlap one another at s (none in a schedule).
 */
export function isCandidateStart(prepared: PreparedAvailability, rules: SlotRules, now: number, s: number): boolean {
  if (!(rules.stepMs > 0) || !(rules.durationMs > 0)) throw new RangeError('duration and step must be positive');
  if (s < now + rules.minimumNoticeMs || s > now + rules.maximumAdvanceMs) return false;
  // The meeting inside the union: the union interval holding s (which holds any segment holding s) lasts until s + duration.
  const holder = prepared.union[firstEndingAfter(prepared.union, s)];
  if (!holder || holder.start > s || s + rules.durationMs > holder.end) return false;
  // On the grid of a segment holding s: the last segment starting at or before s, then back while one before it can reach s.
  const { segments, endsUpTo } = prepared;
  let lo = 0;
  let hi = segments.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (segments[mid]!.start <= s) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1; i >= 0 && endsUpTo[i]! > s; i--) {
    const seg = segments[i]!;
    if (seg.end > s && (s - seg.start) % rules.stepMs === 0) return true;
  }
  return false;
}

/**
 * Whether `range` overlaps busy time, given as mergeIntervals of it (rule 3 for one start, with
 * `range` its blocked range [s − before, s + duration + after)): O(log B).
 */
export function overlapsMerged(mergedBusy: readonly Interval[], range: Interval): boolean {
  const b = mergedBusy[firstEndingAfter(mergedBusy, range.start)];
  return b !== undefined && b.start < range.end;
}
