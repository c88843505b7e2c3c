import fc from 'fast-check';
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

  it('canonical JSON is, for every value, the text the first version wrote (fingerprints are stored with their keys)', () => {
    // The first version, as it was: the stored fingerprints of live keys were made with it.
    const first = (value: unknown): string => {
      if (value === undefined || value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : first(v))).join(',')}]`;
      if (typeof value === 'object') {
        const entries = Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${first(v)}`).join(',')}}`;
      }
      return JSON.stringify(value);
    };
    const key = fc.string({ unit: 'binary', maxLength: 6 });
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
      leaf: fc.oneof(fc.constant(null), fc.constant(undefined), fc.boolean(), fc.double(), fc.integer(), fc.string({ unit: 'binary' }), fc.constant(-0)),
      array: fc.array(tie('tree'), { maxLength: 5 }),
      object: fc.dictionary(key, tie('tree'), { maxKeys: 6 }),
    }));
    fc.assert(fc.property(tree, (value) => expect(canonicalJson(value)).toBe(first(value))), { numRuns: 2000 });
    // Arrays with holes and functions, which JSON.parse never makes: the same text too.
    for (const odd of [[1, , 2], [, 'a'], [() => 1, 2], { f: () => 1, a: [undefined] }, { ['\u00e9']: 1, e: 2, E: 3, ['\ud83d\ude00']: 4, ['\uffff']: 5 }]) expect(canonicalJson(odd)).toBe(first(odd));
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
