import { z } from 'zod';

/** decisions.md §4: optional, 1 to 255 printable ASCII characters (space to tilde). */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]*$/, { error: 'Must be printable ASCII.' })
  .meta({ id: 'IdempotencyKey', description: 'Idempotency-Key header: 1 to 255 printable ASCII characters.' });

/** decisions.md §1: a caller-sent X-Request-Id is kept when it matches; otherwise one is made. */
export const REQUEST_ID_HEADER_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export function isAcceptableRequestId(value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID_HEADER_RE.test(value);
}
