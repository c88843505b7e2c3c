import { DomainError } from '@sched/contracts';
import { canonicalJson, normalizePath, parseIdempotencyKey, requestFingerprint, scopedKeyId } from '../src';

function issueOf(raw: string): unknown {
  try {
    parseIdempotencyKey(raw);
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('invalid_request');
    return (err as DomainError).details;
  }
}

describe('parseIdempotencyKey (decisions.md §4: optional, 1 to 255 printable ASCII)', () => {
  it('accepts no key, a 1-character key and a 255-character key of printable ASCII including spaces', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('a')).toBe('a');
    const k = ' ~'.repeat(127) + 'z';
    expect(k).toHaveLength(255);
    expect(parseIdempotencyKey(k)).toBe(k);
  });

  it('refuses 256 characters, an empty key and non-printable or non-ASCII characters, naming the header', () => {
    expect(issueOf('a'.repeat(256))).toEqual([{ field: 'Idempotency-Key', issue: 'too_long' }]);
    expect(issueOf('')).toEqual([{ field: 'Idempotency-Key', issue: 'too_short' }]);
    expect(issueOf('a\tb')).toEqual([{ field: 'Idempotency-Key', issue: 'invalid_format' }]);
    expect(issueOf('caf\u00e9')).toEqual([{ field: 'Idempotency-Key', issue: 'invalid_format' }]);
    expect(issueOf('a\u007fb')).toEqual([{ field: 'Idempotency-Key', issue: 'invalid_format' }]);
  });
});

describe('fingerprints and scopes', () => {
  it('canonical JSON sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('the fingerprint changes with method, path or any body value, not with key order, query string or a trailing slash', () => {
    const base = requestFingerprint('POST', '/v1/bookings', { a: 1, b: 2 });
    expect(requestFingerprint('post', '/v1/bookings/?x=1', { b: 2, a: 1 })).toBe(base);
    expect(requestFingerprint('PUT', '/v1/bookings', { a: 1, b: 2 })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/bookings/x', { a: 1, b: 2 })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/bookings', { a: 1, b: 3 })).not.toBe(base);
    expect(normalizePath('/')).toBe('/');
  });

  it('scope ids cannot be confused by separators inside the parts', () => {
    const a = scopedKeyId({ workspaceId: 'w', apiKeyId: 'k', method: 'POST', path: '/p' }, 'x');
    const b = scopedKeyId({ workspaceId: 'w', apiKeyId: 'k","POST', method: 'POST', path: '/p' }, 'x');
    expect(a).not.toBe(b);
  });
});
