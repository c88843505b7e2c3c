/**
 * Time zone arithmetic for the slot engine. Instants are epoch milliseconds; a "wall" value is the
 * local calendar reading of a zone written as if it were UTC (Date.UTC of the local fields).
 *
 * Offsets come from tzdata through Intl.DateTimeFormat, as in date-fns-tz's toZonedTime. Not its
 * getTimezoneOffset(zone, date): that one reads `date` as a wall time in the zone, so it answers the
 * old offset for the hour after a spring-forward change (tested). A raw lookup costs microseconds
 * and a Slots query needs hundreds, so offsets are memoised per zone and UTC day: each day is either
 * of one offset or holds one transition, found once by bisection. Two transitions within one UTC day
 * do not occur in tzdata for any zone in use today.
 */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

interface DayOffsets {
  /** Offset at the start of the UTC day. */
  before: number;
  /** Offset from `transitionAt` on (equal to `before` on most days). */
  after: number;
  transitionAt: number;
}

const MAX_MEMO_ENTRIES = 200_000;
/** Per zone, per UTC day number (a number key: no text built per lookup). */
const memo = new Map<string, Map<number, DayOffsets>>();
let memoEntries = 0;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    // Throws RangeError for an unknown zone; callers pass zones the contract schemas validated.
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size < 1000) formatters.set(timeZone, f);
  }
  return f;
}

function rawOffset(timeZone: string, instant: number): number {
  const parts: Record<string, string> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(instant))) parts[p.type] = p.value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  const wall = new Date(0);
  wall.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
  wall.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0);
  return wall.getTime() - (instant - mod(instant, 1000));
}

function dayOffsets(timeZone: string, day: number): DayOffsets {
  let days = memo.get(timeZone);
  const hit = days?.get(day);
  if (hit) return hit;
  const start = day * DAY_MS;
  const before = rawOffset(timeZone, start);
  const after = rawOffset(timeZone, start + DAY_MS);
  let transitionAt = start + DAY_MS;
  if (before !== after) {
    // First instant of the day with the new offset; transitions fall on whole seconds, bisect to the ms.
    let lo = start;
    let hi = start + DAY_MS;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (rawOffset(timeZone, mid) === before) lo = mid;
      else hi = mid;
    }
    transitionAt = hi;
  }
  const entry = { before, after, transitionAt };
  if (memoEntries >= MAX_MEMO_ENTRIES) {
    memo.clear();
    memoEntries = 0;
    days = undefined;
  }
  if (!days) memo.set(timeZone, (days = new Map()));
  days.set(day, entry);
  memoEntries++;
  return entry;
}

/** UTC offset of `timeZone` at `instant`, in milliseconds (positive east of Greenwich). */
export function offsetAt(timeZone: string, instant: number): number {
  const d = dayOffsets(timeZone, Math.floor(instant / DAY_MS));
  return instant < d.transitionAt ? d.before : d.after;
}

/** The local reading of `instant` in `timeZone`, as a wall value. */
export function toWall(timeZone: string, instant: number): number {
  return instant + offsetAt(timeZone, instant);
}

/**
 * The instant at which the local clock of `timeZone` first reads `wall` or later: the one rule that
 * turns a local time into an instant, also across DST changes.
 * - Ordinary time: the one instant with that reading.
 * - Ambiguous time (clocks go back, the reading happens twice): the earlier occurrence.
 * - Nonexistent time (clocks go forward over it): the instant of the change, i.e. the first moment
 *   after the gap. So 02:30 on a day when 02:00 jumps to 03:00 resolves to 03:00.
 * It is monotonic in `wall`, so intervals never turn inside out.
 */
export function wallToInstant(timeZone: string, wall: number): number {
  // Any instant whose reading is `wall` lies within 14 h (the largest offset) of it.
  const early = offsetAt(timeZone, wall - 14 * HOUR_MS);
  const late = offsetAt(timeZone, wall + 14 * HOUR_MS);
  let best = Number.POSITIVE_INFINITY;
  for (const offset of early === late ? [early] : [early, late]) {
    const t = wall - offset;
    if (offsetAt(timeZone, t) === offset && t < best) best = t;
  }
  if (best !== Number.POSITIVE_INFINITY) return best;
  // In a gap: the change happens between the instant read with the later offset and with the earlier one.
  let lo = wall - late;
  let hi = wall - early;
  if (lo > hi) [lo, hi] = [hi, lo];
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (toWall(timeZone, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

const LOCAL_DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` → wall value of its midnight (the string is validated by the contract schemas). */
export function dateToWall(date: string): number {
  const m = LOCAL_DATE_RE.exec(date);
  if (!m) throw new RangeError('not a local date');
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getTime();
}

function pad(n: number, width = 2): string {
  return String(Math.abs(n)).padStart(width, '0');
}

/** Wall value of a midnight → `YYYY-MM-DD`. */
export function wallToDate(wall: number): string {
  const d = new Date(wall);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** Local date of `instant` in `timeZone`. */
export function localDateOf(timeZone: string, instant: number): string {
  const wall = toWall(timeZone, instant);
  return wallToDate(wall - mod(wall, DAY_MS));
}

/** First instant of a local date: midnight, or the end of a gap that swallows midnight. */
export function startOfLocalDate(timeZone: string, date: string): number {
  return wallToInstant(timeZone, dateToWall(date));
}

export function addDays(date: string, days: number): string {
  return wallToDate(dateToWall(date) + days * DAY_MS);
}

/** 0 = Monday … 6 = Sunday, the order of the schedule's `mon`…`sun`. */
export function isoWeekdayIndex(date: string): number {
  return (new Date(dateToWall(date)).getUTCDay() + 6) % 7;
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

/**
 * `2026-11-22T10:30:00.000+01:00`: the same text as contracts' toLocalTimestamp, built from the
 * memoised offset instead of one Intl call per value (a Slots answer has two per Slot).
 */
export function formatLocal(timeZone: string, instant: number): string {
  const offset = offsetAt(timeZone, instant);
  const d = new Date(instant + offset);
  const minutes = Math.round(offset / MINUTE_MS);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}
