import { createHash } from 'node:crypto';
import { digestsEqual, generateApiKey, hashApiKey, isWellFormedKey, keyHint, parseBearer } from '../src/domain/api-key';

describe('API keys (decisions.md §3)', () => {
  it('are sk_live_ or sk_test_ plus 32 base62 characters, never repeating', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey('live')));
    expect(keys.size).toBe(2000);
    for (const k of keys) expect(k).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(generateApiKey('test')).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
  });

  it('use every base62 character (no modulo bias toward a subset)', () => {
    const seen = new Set(Array.from({ length: 300 }, () => generateApiKey('live').slice(8)).join(''));
    expect(seen.size).toBe(62);
  });

  it('are stored as a SHA-256 hex digest and compared in constant time', () => {
    const k = generateApiKey('live');
    const h = hashApiKey(k);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    // Exactly the digest the stored keys were made with (a key made before must still be found).
    expect(h).toBe(createHash('sha256').update(k, 'utf8').digest('hex'));
    expect(hashApiKey('sk_test_0123456789abcdefghijABCDEFGHIJ01')).toBe('ff954b0334c6ead9d066c1f97fd7264cb3b552f0cc29128afaab6eb94efb5660');
    expect(h).not.toContain(k.slice(8));
    expect(digestsEqual(h, hashApiKey(k))).toBe(true);
    expect(digestsEqual(h, hashApiKey(generateApiKey('live')))).toBe(false);
    expect(digestsEqual(h, '')).toBe(false);
  });

  it('show only a hint of their first characters', () => {
    const k = generateApiKey('live');
    expect(keyHint(k)).toBe(`${k.slice(0, 12)}…`);
  });

  it('are read from a Bearer header and checked for shape', () => {
    expect(parseBearer('Bearer sk_live_abc')).toBe('sk_live_abc');
    expect(parseBearer('bearer  x')).toBeNull();
    expect(parseBearer('Basic abc')).toBeNull();
    expect(parseBearer(undefined)).toBeNull();
    expect(isWellFormedKey('sk_live_' + 'a'.repeat(32))).toBe(true);
    expect(isWellFormedKey('sk_live_' + 'a'.repeat(31))).toBe(false);
    expect(isWellFormedKey('sk_prod_' + 'a'.repeat(32))).toBe(false);
  });
});
