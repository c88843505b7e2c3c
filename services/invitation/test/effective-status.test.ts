import { effectiveStatus, hashCredential, invitationUrl, isCredentialShaped, newCredential } from '../src/domain/invitation';

const T = new Date('2026-06-01T12:00:00.000Z');
const at = (ms: number) => new Date(T.getTime() + ms);
const base = { revokedAt: null, usedCount: 0, maxUses: 1, expiresAt: at(3600_000), notBefore: null as Date | null };

describe('effective status (decisions.md §9, first match wins)', () => {
  it('is active between not_before (inclusive) and expires_at (exclusive)', () => {
    expect(effectiveStatus({ ...base, notBefore: T }, T)).toBe('active');
    expect(effectiveStatus({ ...base, notBefore: T }, at(-1))).toBe('not_yet_valid');
    expect(effectiveStatus(base, at(3600_000 - 1))).toBe('active');
    expect(effectiveStatus(base, at(3600_000))).toBe('expired');
  });

  it('orders revoked before exhausted before expired before not_yet_valid', () => {
    const everything = { revokedAt: T, usedCount: 1, maxUses: 1, expiresAt: at(-1), notBefore: at(10) };
    expect(effectiveStatus(everything, T)).toBe('revoked');
    expect(effectiveStatus({ ...everything, revokedAt: null }, T)).toBe('exhausted');
    expect(effectiveStatus({ ...everything, revokedAt: null, usedCount: 0 }, T)).toBe('expired');
    expect(effectiveStatus({ ...everything, revokedAt: null, usedCount: 0, expiresAt: at(100) }, T)).toBe('not_yet_valid');
  });
});

describe('credentials', () => {
  it('carry 256 random bits in 43 URL-safe characters, differ every time, and hash to SHA-256 hex', () => {
    const a = newCredential();
    const b = newCredential();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(isCredentialShaped(a)).toBe(true);
    expect(isCredentialShaped(`${a}x`)).toBe(false);
    expect(hashCredential(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashCredential(a)).not.toContain(a);
  });

  it('build invitation_url as {BOOKING_PAGE_URL}/i/<credential>, whatever trailing slash the setting has', () => {
    expect(invitationUrl('http://localhost:8080/book/', 'abc')).toBe('http://localhost:8080/book/i/abc');
    expect(invitationUrl('https://x.example/book', 'abc')).toBe('https://x.example/book/i/abc');
  });
});
