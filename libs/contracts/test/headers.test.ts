import { idempotencyKeySchema, isAcceptableRequestId } from '../src';
import { details, ok } from './helpers';

describe('headers', () => {
  it('Idempotency-Key: 1 to 255 printable ASCII characters', () => {
    ok(idempotencyKeySchema, 'k');
    ok(idempotencyKeySchema, '~'.repeat(255));
    ok(idempotencyKeySchema, 'order 17 / retry');
    expect(details(idempotencyKeySchema, '')).toEqual([{ field: '', issue: 'too_short' }]);
    expect(details(idempotencyKeySchema, 'k'.repeat(256))).toEqual([{ field: '', issue: 'too_long' }]);
    expect(details(idempotencyKeySchema, 'clé')).toEqual([{ field: '', issue: 'invalid_format' }]);
    expect(details(idempotencyKeySchema, 'a\tb')).toEqual([{ field: '', issue: 'invalid_format' }]);
  });

  it('X-Request-Id: kept when 1 to 128 of [A-Za-z0-9._:-]', () => {
    expect(isAcceptableRequestId('abc-123_x.y:z')).toBe(true);
    expect(isAcceptableRequestId('a'.repeat(128))).toBe(true);
    expect(isAcceptableRequestId('a'.repeat(129))).toBe(false);
    expect(isAcceptableRequestId('')).toBe(false);
    expect(isAcceptableRequestId('a b')).toBe(false);
  });
});
