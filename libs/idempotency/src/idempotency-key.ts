import { DomainError, idempotencyKeySchema } from '@sched/contracts';

/** The field name error details use for the header (decisions.md §2 `{field, issue}`). */
export const IDEMPOTENCY_KEY_FIELD = 'Idempotency-Key';

/**
 * Validates the raw `Idempotency-Key` header: absent is fine (the request simply is not idempotent);
 * otherwise 1 to 255 printable ASCII characters, else `400 invalid_request` naming the header.
 */
export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const result = idempotencyKeySchema.safeParse(raw);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const issue = first?.code === 'too_small' ? 'too_short' : first?.code === 'too_big' ? 'too_long' : 'invalid_format';
  throw new DomainError('invalid_request', {
    message: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters.',
    details: [{ field: IDEMPOTENCY_KEY_FIELD, issue }],
  });
}
