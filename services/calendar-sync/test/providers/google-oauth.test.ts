import { createHash, randomBytes } from 'node:crypto';
import { accountOf, GoogleOAuth } from '../../src/providers/google/oauth';
import { startFakeGoogle, type FakeGoogle } from '@sched/testing';
import { providerFailure } from '../support/provider-failure';

/** GoogleOAuth (google-auth-library's OAuth2Client) against the fake's token and revoke endpoints. */

let google: FakeGoogle;
let oauth: GoogleOAuth;

beforeAll(async () => {
  google = await startFakeGoogle();
  oauth = new GoogleOAuth({ clientId: google.clientId, clientSecret: google.clientSecret, endpoints: google.endpoints, timeoutMs: 1000 });
});
afterAll(() => google.close());


describe('GoogleOAuth', () => {
  it('exchanges a refresh token for an access token the Calendar API accepts, with its expiry', async () => {
    const refreshToken = google.issueRefreshToken();
    const before = Date.now();
    const token = await oauth.refresh(refreshToken);
    expect(token.accessToken).toMatch(/^ya29\./);
    expect(token.scope).toBe('https://www.googleapis.com/auth/calendar.events');
    expect(token.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 3599_000 - 1000);
    expect(token.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 3599_000);
    const res = await fetch(`${google.rootUrl}calendar/v3/calendars/primary/events?maxResults=1`, { headers: { authorization: `Bearer ${token.accessToken}` } });
    expect(res.status).toBe(200);
    const sent = google.calls.filter((c) => c.endpoint === 'token').at(-1)!;
    expect(sent.method).toBe('POST');
  });

  it('invalid_grant (revoked or expired refresh token): reauthorization_required, no token in the message', async () => {
    const refreshToken = google.issueRefreshToken();
    google.revokeRefreshToken(refreshToken);
    const err = await providerFailure(oauth.refresh(refreshToken));
    expect(err.kind).toBe('reauthorization_required');
    expect(err.message).not.toContain(refreshToken);
    expect((await providerFailure(oauth.refresh('1//never-issued'))).kind).toBe('reauthorization_required');
  });

  it("this service's client refused (invalid_client): auth_failed, without the secret in the message", async () => {
    const wrong = new GoogleOAuth({ clientId: google.clientId, clientSecret: 'not-the-secret', endpoints: google.endpoints, timeoutMs: 1000 });
    const err = await providerFailure(wrong.refresh(google.issueRefreshToken()));
    expect(err.kind).toBe('auth_failed');
    expect(err.message).not.toContain('not-the-secret');
  });

  it("a 5xx or 429 is tried once (the SDK's own token retries are off): unavailable", async () => {
    const refreshToken = google.issueRefreshToken();
    for (const status of [503, 429]) {
      const before = google.count('token');
      google.failNext(1, { status, where: 'token', retryAfter: '0' });
      expect((await providerFailure(oauth.refresh(refreshToken))).kind).toBe('unavailable');
      expect(google.count('token') - before).toBe(1);
    }
    await expect(oauth.refresh(refreshToken)).resolves.toMatchObject({ accessToken: expect.any(String) });
  });

  it('no answer in time, or the endpoint down: unavailable within the bound', async () => {
    const refreshToken = google.issueRefreshToken();
    google.stallNext(1);
    let started = Date.now();
    expect((await providerFailure(oauth.refresh(refreshToken))).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(1000 + 2000);
    await google.down();
    try {
      started = Date.now();
      expect((await providerFailure(oauth.refresh(refreshToken))).kind).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(1000 + 2000);
    } finally {
      await google.up();
    }
  });

  it('the caller may abort a refresh (the token store under its own deadline)', async () => {
    google.stallNext(1);
    const err = await providerFailure(oauth.refresh(google.issueRefreshToken(), AbortSignal.timeout(100)));
    expect(err.kind).toBe('unavailable');
  });

  it('revokes a grant: the refresh token stops working; a token Google no longer knows counts as revoked', async () => {
    const refreshToken = google.issueRefreshToken();
    await oauth.revoke(refreshToken);
    expect(google.isRefreshTokenValid(refreshToken)).toBe(false);
    expect((await providerFailure(oauth.refresh(refreshToken))).kind).toBe('reauthorization_required');
    await expect(oauth.revoke(refreshToken)).resolves.toBeUndefined();
  });

  it("the code exchange names the Google account from the id token (openid email asked at consent)", async () => {
    google.consentAccount = 'named-host@example.com';
    const verifier = randomBytes(32).toString('base64url');
    const redirectUri = 'https://sched.example/oauth/callback';
    const url = new URL(await oauth.authorizationUrl({ state: 's', codeChallenge: createHash('sha256').update(verifier).digest('base64url'), redirectUri }));
    expect(url.searchParams.get('scope')!.split(' ')).toEqual(['openid', 'email', 'https://www.googleapis.com/auth/calendar.events']);
    const back = await fetch(url, { redirect: 'manual' });
    const code = new URL(back.headers.get('location')!).searchParams.get('code')!;
    // Not a test of the bound: the fake makes its RSA key for the id token on the first exchange, which a loaded
    // machine alone can keep past the 1-s bound the stall tests above need (a fresh-clone CI run saw it).
    const patient = new GoogleOAuth({ clientId: google.clientId, clientSecret: google.clientSecret, endpoints: google.endpoints, timeoutMs: 10_000 });
    const grant = await patient.exchangeCode({ code, codeVerifier: verifier, redirectUri });
    expect(grant.account).toBe('named-host@example.com');
    expect(google.isRefreshTokenValid(grant.refreshToken)).toBe(true);
  });
});

describe('accountOf (the id token of a code exchange)', () => {
  const jwt = (claims: Record<string, unknown>) => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
  const good = { iss: 'https://accounts.google.com', aud: 'client-1', sub: '1', email: 'a@example.com', email_verified: true };

  it('reads the verified email of a token Google issued for this client', () => {
    expect(accountOf(jwt(good), 'client-1')).toBe('a@example.com');
    expect(accountOf(jwt({ ...good, iss: 'accounts.google.com', aud: ['other', 'client-1'] }), 'client-1')).toBe('a@example.com');
  });

  it('is null for no token, another client, another issuer, an unverified or missing email, or garbage', () => {
    expect(accountOf(undefined, 'client-1')).toBeNull();
    expect(accountOf(jwt(good), 'client-2')).toBeNull();
    expect(accountOf(jwt({ ...good, iss: 'https://evil.example' }), 'client-1')).toBeNull();
    expect(accountOf(jwt({ ...good, email_verified: false }), 'client-1')).toBeNull();
    expect(accountOf(jwt({ ...good, email: undefined }), 'client-1')).toBeNull();
    expect(accountOf('not-a-jwt', 'client-1')).toBeNull();
    expect(accountOf('a.%%%.c', 'client-1')).toBeNull();
  });
});
