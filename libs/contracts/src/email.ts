import { z } from 'zod';

export const EMAIL_MAX_LENGTH = 254;

/**
 * decisions.md §1: one `@`, a non-empty local part, no white space or control characters, and a
 * domain of non-empty labels with at least one dot. Deliberately no stricter: real addresses vary.
 */
export const EMAIL_RE = /^[^\s@\x00-\x1f\x7f]+@[^\s@.\x00-\x1f\x7f]+(?:\.[^\s@.\x00-\x1f\x7f]+)+$/;

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= EMAIL_MAX_LENGTH && EMAIL_RE.test(value);
}

/** Email address: over 254 characters is `too_long`, a bad shape is `invalid_format`. */
export const emailSchema = z
  .string()
  .max(EMAIL_MAX_LENGTH)
  .regex(EMAIL_RE, { error: 'Must be an email address.' })
  .meta({ id: 'Email', description: 'Email address (one @, no spaces, a dot in the domain), at most 254 characters.' });
