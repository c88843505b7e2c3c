import { DomainError } from '@sched/contracts';
import { secretBoxFromEnv } from '@sched/secrets';
import { hashState, OAUTH_STATE_TTL_MS, pkceChallenge, startCalendarOAuth, type OAuthStartDeps } from '../../src/domain/calendar-oauth';
import { ProviderError } from '../../src/domain/calendar-provider';
import { oauthStateAad } from '../../src/domain/connection-status';
import type { OAuthState } from '../../src/domain/ports';

const sealer = secretBoxFromEnv({ SECRETS_KEY: Buffer.alloc(32, 3).toString('base64') });
const now = new Date('2026-12-01T08:00:00Z');
const host = { id: 'hst_1', name: 'H', email: 'h@example.com', timezone: 'UTC', conferencing_url_template: null };

function deps(over: Partial<OAuthStartDeps> = {}): OAuthStartDeps & { saved: OAuthState[]; asked: Array<{ state: string; codeChallenge: string; redirectUri: string }> } {
  const saved: OAuthState[] = [];
  const asked: Array<{ state: string; codeChallenge: string; redirectUri: string }> = [];
  return {
    saved,
    asked,
    hosts: { getHost: async (ws, id) => (ws === 'wsp_1' && id === 'hst_1' ? host : null) },
    states: { save: async (s) => void saved.push(s), consume: async () => null },
    authorizers: {
      google: {
        authorizationUrl: async (i) => {
          asked.push(i);
          return `https://auth.example/?state=${i.state}`;
        },
        exchangeCode: async () => Promise.reject(new Error('not used when starting')),
      },
    },
    sealer,
    redirectUri: 'https://sched.example/oauth/callback',
    now: () => now,
    ...over,
  };
}

describe('startCalendarOAuth', () => {
  it('keeps only the hash of a fresh 256-bit state, binds it to workspace, host and provider, seals the PKCE verifier, and sends its S256 challenge', async () => {
    const d = deps();
    const out = await startCalendarOAuth(d, { workspaceId: 'wsp_1', hostId: 'hst_1', body: { provider: 'google', calendar_id: 'team@example.com' } });
    const [asked] = d.asked;
    const [row] = d.saved;
    expect(asked!.redirectUri).toBe('https://sched.example/oauth/callback');
    expect(asked!.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(out).toEqual({ provider: 'google', authorizationUrl: `https://auth.example/?state=${asked!.state}`, expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_MS) });
    expect(row).toMatchObject({ stateHash: hashState(asked!.state), workspaceId: 'wsp_1', hostId: 'hst_1', provider: 'google', calendarId: 'team@example.com', expiresAt: out.expiresAt });
    expect(row!.stateHash).not.toContain(asked!.state);
    expect(row!.verifierSealed).not.toContain(asked!.codeChallenge);
    const verifier = sealer.open(row!.verifierSealed, oauthStateAad('wsp_1', 'hst_1'));
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pkceChallenge(verifier)).toBe(asked!.codeChallenge);
    expect(() => sealer.open(row!.verifierSealed, oauthStateAad('wsp_1', 'hst_2'))).toThrow();
  });

  it('gives every start its own state and verifier', async () => {
    const d = deps();
    await startCalendarOAuth(d, { workspaceId: 'wsp_1', hostId: 'hst_1', body: { provider: 'google' } });
    await startCalendarOAuth(d, { workspaceId: 'wsp_1', hostId: 'hst_1', body: { provider: 'google' } });
    expect(d.asked[0]!.state).not.toBe(d.asked[1]!.state);
    expect(d.asked[0]!.codeChallenge).not.toBe(d.asked[1]!.codeChallenge);
    expect(d.saved[1]!.calendarId).toBeNull();
  });

  it('an unknown host is not_found, a provider without its OAuth client invalid_reference on provider; nothing stored', async () => {
    const d = deps();
    await expect(startCalendarOAuth(d, { workspaceId: 'wsp_1', hostId: 'hst_9', body: { provider: 'google' } })).rejects.toMatchObject({ code: 'not_found' });
    const err = await startCalendarOAuth(d, { workspaceId: 'wsp_1', hostId: 'hst_1', body: { provider: 'microsoft' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'invalid_reference', details: [{ field: 'provider', issue: 'not_configured' }] });
    expect(d.saved).toEqual([]);
  });

  it('an authorization endpoint that cannot be used (MSAL metadata) is upstream_unavailable, nothing stored', async () => {
    const d = deps({ authorizers: { google: { authorizationUrl: async () => Promise.reject(new ProviderError('unavailable', 'down')), exchangeCode: async () => Promise.reject(new Error('not used')) } } });
    await expect(startCalendarOAuth(d, { workspaceId: 'wsp_1', hostId: 'hst_1', body: { provider: 'google' } })).rejects.toMatchObject({ code: 'upstream_unavailable' });
    expect(d.saved).toEqual([]);
  });
});
