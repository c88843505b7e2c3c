import { z } from 'zod';
import { pushIssue } from './issues';

const MS_PER_DAY = 86_400_000;

// Timestamps in (decisions.md §1): RFC 3339, offset `Z` or `+00:00` only, 1 to 9 fraction digits.
// Upper-case `T` and `Z` only. Digits past milliseconds are truncated.
const TIMESTAMP_IN_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|\+00:00)$/;
// Timestamps out: exactly what toTimestamp makes.
const TIMESTAMP_OUT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LOCAL_DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LOCAL_TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

/** Builds a UTC instant from parts and returns it only if every part survives the round trip. */
function utcFromParts(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): Date | null {
  // Year 0000 fits the 4-digit shape but is no year of the calendar Postgres stores (1 BC comes before 0001).
  if (y < 1) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // setUTCFullYear keeps years 0-99 literal, unlike Date.UTC
  date.setUTCHours(h, mi, s, ms);
  const same =
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === s;
  return same ? date : null;
}

/**
 * Parses an input timestamp. Returns null for any other offset and for impossible dates and times
 * (2026-02-30, month 13, 24:00:00, leap second 23:59:60): these roll over in Date and so fail the
 * round trip.
 */
export function parseTimestamp(value: string): Date | null {
  const m = TIMESTAMP_IN_RE.exec(value);
  if (!m) return null;
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  return utcFromParts(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), ms);
}

/** Output form: `2026-11-22T09:30:00.000Z`. */
export function toTimestamp(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('toTimestamp: invalid date');
  return date.toISOString();
}

/** Input timestamp: string on the wire, Date after parsing. Shape or calendar errors: invalid_format. */
export const timestampInputSchema = z
  .string()
  .regex(TIMESTAMP_IN_RE, { error: 'Must be an RFC 3339 UTC timestamp (offset Z or +00:00).' })
  .check((payload) => {
    if (TIMESTAMP_IN_RE.test(payload.value) && !parseTimestamp(payload.value)) {
      pushIssue(payload, 'invalid_format', 'Must be a valid calendar date and time.');
    }
  })
  .transform((value) => parseTimestamp(value) as Date)
  .meta({
    id: 'TimestampInput',
    format: 'date-time',
    description: 'RFC 3339 timestamp in UTC: offset `Z` or `+00:00`, fractional seconds optional, e.g. `2026-11-22T09:30:00Z`.',
  });

/** Output timestamp, as every response and event carries it. */
export const timestampSchema = z
  .string()
  .regex(TIMESTAMP_OUT_RE)
  .meta({ id: 'Timestamp', format: 'date-time', description: 'RFC 3339 UTC with milliseconds, e.g. `2026-11-22T09:30:00.000Z`.' });

export function parseLocalDate(value: string): Date | null {
  const m = LOCAL_DATE_RE.exec(value);
  if (!m) return null;
  return utcFromParts(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Whole days from `from` to `to` (both YYYY-MM-DD); null when either is not a valid date. */
export function localDateDiffDays(from: string, to: string): number | null {
  const a = parseLocalDate(from);
  const b = parseLocalDate(to);
  if (!a || !b) return null;
  return Math.round((b.getTime() - a.getTime()) / MS_PER_DAY);
}

/** Local calendar date `YYYY-MM-DD`; stays a string after parsing. */
export const localDateSchema = z
  .string()
  .regex(LOCAL_DATE_RE, { error: 'Must be a date in the form YYYY-MM-DD.' })
  .check((payload) => {
    if (LOCAL_DATE_RE.test(payload.value) && !parseLocalDate(payload.value)) {
      pushIssue(payload, 'invalid_format', 'Must be a valid calendar date.');
    }
  })
  .meta({ id: 'LocalDate', format: 'date', description: 'Calendar date `YYYY-MM-DD`.' });

const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_CACHED_FORMATTERS = 1000;

function formatterFor(timeZone: string): Intl.DateTimeFormat | null {
  const cached = formatters.get(timeZone);
  if (cached) return cached;
  try {
    const f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      era: 'short',
    });
    if (formatters.size < MAX_CACHED_FORMATTERS) formatters.set(timeZone, f);
    return f;
  } catch {
    return null;
  }
}

/**
 * True for a time zone name that Intl knows (IANA names and `UTC`). Numeric offsets such as
 * `+01:00`, which newer runtimes accept, are not IANA names and are refused.
 */
export function isValidTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  if (!/^[A-Za-z]/.test(value)) return false;
  return formatterFor(value) !== null;
}

/** IANA time zone name. Unknown name: issue `invalid_value`. */
export const timezoneSchema = z
  .string()
  .check((payload) => {
    if (!isValidTimeZone(payload.value)) pushIssue(payload, 'invalid_value', 'Must be a known IANA time zone name.');
  })
  .meta({ id: 'Timezone', description: 'IANA time zone name, e.g. `Europe/Paris` or `UTC`.' });

function pad(n: number, width = 2): string {
  return String(Math.abs(n)).padStart(width, '0');
}

/**
 * The instant in `timeZone` with its numeric offset, as a Slot's local_start_at:
 * `2026-11-22T10:30:00.000+01:00`. UTC itself is written `+00:00`.
 */
export function toLocalTimestamp(date: Date, timeZone: string): string {
  const f = formatterFor(timeZone);
  if (!f) throw new RangeError(`toLocalTimestamp: unknown time zone`);
  const t = date.getTime();
  if (Number.isNaN(t)) throw new RangeError('toLocalTimestamp: invalid date');
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(date)) parts[p.type] = p.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const month = Number(parts.month);
  const day = Number(parts.day);
  const hour = Number(parts.hour);
  const minute = Number(parts.minute);
  const second = Number(parts.second);
  const ms = ((t % 1000) + 1000) % 1000;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, ms);
  const offsetMinutes = Math.round((local.getTime() - t) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  return (
    `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(ms, 3)}` +
    `${sign}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`
  );
}

/** Slot local time: ISO 8601 with milliseconds and a numeric offset. */
export const localTimestampSchema = z.string().regex(LOCAL_TIMESTAMP_RE).meta({
  id: 'LocalTimestamp',
  description: 'ISO 8601 local date-time with milliseconds and numeric UTC offset, e.g. `2026-11-22T10:30:00.000+01:00`.',
});

export { MS_PER_DAY };
