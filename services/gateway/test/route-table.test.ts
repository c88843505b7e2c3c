import { authenticate, requireScope, type KeyRecord } from '../src/domain/authorize';
import { decide, windowStart } from '../src/domain/rate-limit';
import { TtlCache } from '../src/domain/key-cache';
import { DomainError } from '@sched/contracts';

describe('authorization', () => {
  const base: KeyRecord = { id: 'key_1', workspaceId: 'wsp_1', scopes: ['bookings:read'], expiresAt: null, revokedAt: null, rateLimit: null };
  const now = new Date('2026-11-22T10:00:00.000Z');

  it('refuses unknown, revoked and expired keys alike with 401', () => {
    for (const rec of [null, { ...base, revokedAt: new Date(now.getTime() - 1) }, { ...base, expiresAt: now }]) {
      expect(() => authenticate(rec, now)).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    }
    expect(authenticate({ ...base, expiresAt: new Date(now.getTime() + 1) }, now)).toBeTruthy();
  });

  it('names the missing scope in details', () => {
    try {
      requireScope(base, 'bookings:write');
      throw new Error('should have thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).details).toEqual([{ field: 'scope', issue: 'bookings:write' }]);
    }
    expect(() => requireScope(base, 'bookings:read')).not.toThrow();
  });
});

describe('rate limit windows', () => {
  it('allows up to the limit in a window and reports remaining and reset', () => {
    const now = new Date('2026-11-22T10:00:07.500Z');
    expect(windowStart(now, 10).toISOString()).toBe('2026-11-22T10:00:00.000Z');
    expect(decide(100, { limit: 100, windowSeconds: 10 }, now)).toEqual({ allowed: true, limit: 100, remaining: 0, resetSeconds: 3 });
    expect(decide(101, { limit: 100, windowSeconds: 10 }, now).allowed).toBe(false);
  });
});

describe('key cache', () => {
  it('forgets an entry after its TTL and never accepts a TTL over 5 s', () => {
    let t = 0;
    const c = new TtlCache<string>(5000, 10, () => t);
    c.set('a', 'x');
    t = 4999;
    expect(c.get('a')).toBe('x');
    t = 5000;
    expect(c.get('a')).toBeUndefined();
    expect(() => new TtlCache(5001)).toThrow(/at most 5000/);
  });
});
