/**
 * The one reading of a `Retry-After` header (RFC 9110 §10.2.3) in the tree: delay-seconds (digits
 * only) or an HTTP-date, as milliseconds to wait from `now` (a date already past is 0).
 * Absent, empty, negative, fractional or unreadable values are `undefined`, and so is a bare number
 * with a sign or a dot (`-5`, `1.5`): the header has no such form. A date must name its month (all
 * three HTTP-date forms do), so `2026` is not read as a year. A header sent twice (a list) is read by
 * its first value. A value too large to be a number of milliseconds is capped at
 * Number.MAX_SAFE_INTEGER: callers bound the wait themselves.
 */
export function parseRetryAfter(value: string | readonly string[] | null | undefined, now: number | Date = Date.now()): number | undefined {
  const raw = typeof value === 'string' ? value : value?.[0];
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v === '') return undefined;
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, Number.MAX_SAFE_INTEGER);
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - (typeof now === 'number' ? now : now.getTime()));
}

/** parseRetryAfter in whole seconds, rounded up (what our own answers' Retry-After carries). */
export function parseRetryAfterSeconds(value: string | readonly string[] | null | undefined, now: number | Date = Date.now()): number | undefined {
  const ms = parseRetryAfter(value, now);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}
