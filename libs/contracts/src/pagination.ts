import { z } from 'zod';

/** Page size bounds and default (api-v1.md Limits, decisions.md §5). */
export const LIST_LIMIT_MIN = 1;
export const LIST_LIMIT_MAX = 100;
export const DEFAULT_LIST_LIMIT = 20;
export const CURSOR_MAX_LENGTH = 2048;

/** Opaque cursor from a previous page. Empty is refused (`too_short`); it could never verify. */
export const cursorSchema = z
  .string()
  .min(1)
  .max(CURSOR_MAX_LENGTH)
  .meta({ id: 'Cursor', description: 'Opaque cursor returned as meta.next_cursor by the previous page; at most 2048 characters.' });

// Canonical base-10: no sign, no leading zero, no blanks, no exponent, no fraction.
const CANONICAL_INT_RE = /^(?:0|[1-9][0-9]*)$/;

/**
 * An integer carried in a query string. Only canonical base-10 digits are accepted (`'01'`, `'+1'`,
 * `'1.0'`, `'1e2'`, `''` and `' 1'` are `invalid_format`); the number is then range-checked, so
 * `'0'` and `'101'` for a 1..100 parameter are `out_of_range`.
 */
export function queryIntSchema(min: number, max: number) {
  return z
    .string()
    .regex(CANONICAL_INT_RE, { error: 'Must be a base-10 integer without sign or leading zeros.' })
    .transform((s) => (s.length > 15 ? Number.MAX_SAFE_INTEGER : Number(s)))
    .pipe(z.number().int().min(min).max(max));
}

/** `limit` as a query parameter. */
export const limitQuerySchema = queryIntSchema(LIST_LIMIT_MIN, LIST_LIMIT_MAX).meta({
  id: 'LimitQuery',
  description: 'Page size, integer 1 to 100 written in canonical base-10; default 20.',
});

/** `limit` inside a JSON body. */
export const limitBodySchema = z
  .number()
  .int()
  .min(LIST_LIMIT_MIN)
  .max(LIST_LIMIT_MAX)
  .meta({ id: 'Limit', description: 'Page size, integer 1 to 100; default 20.' });
