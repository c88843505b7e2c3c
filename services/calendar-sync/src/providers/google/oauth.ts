import { CodeChallengeMethod, OAuth2Client, type OAuth2ClientOptions } from 'google-auth-library';
import { ProviderError } from '../../domain/calendar-provider';
import type { OAuthGrant } from '../../domain/ports';

/**
 * The scopes asked at consent. Calendar: only calendar.events; the adapter calls events.list / insert /
 * patch / delete and nothing else (busy times are read from events.list, the calendar checked with it
 * too), so calendar.readonly would add nothing it uses. Identity: `openid email` (non-sensitive), so the
 * code exchange answers an id token naming the Google account, shown as the connection's `username`
 * (which account a host connected is what an admin asks first when events land in the wrong calendar).
 */
export const GOOGLE_SCOPES = ['openid', 'email', 'https://www.googleapis.com/auth/calendar.events'];

/** Issuers of Google's id tokens (OpenID Connect discovery document of accounts.google.com). */
const GOOGLE_ISSUERS = new Set(['https://accounts.google.com', 'accounts.google.com']);

export interface GoogleOAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Google's endpoints by default; tests point `oauth2AuthBaseUrl` / `oauth2TokenUrl` / `oauth2RevokeUrl` at the fake. */
  endpoints?: OAuth2ClientOptions['endpoints'];
  /** Bound on one token request (one try: see `noSdkRetries`). */
  timeoutMs: number;
}

export interface GoogleAccessToken {
  accessToken: string;
  /** When Google says it expires; null when the answer had no `expires_in`. */
  expiresAt: Date | null;
  /** The scopes granted, space-separated, as Google answers them. */
  scope: string | null;
}

interface ErrorLike {
  message?: unknown;
  status?: unknown;
  response?: { status?: unknown; data?: unknown };
}

/**
 * Google's OAuth 2.0 token endpoint through google-auth-library's OAuth2Client: a refresh token
 * exchanged for an access token, and revocation (disconnect). What the token store calls; the
 * calendar adapter never does. Failures are ProviderErrors:
 * - `invalid_grant` (the user revoked the access, the token expired or was reset): reauthorization_required;
 * - `invalid_client` / `unauthorized_client` (this service's client id or secret refused): auth_failed;
 * - no answer in time, refused, 429, 5xx: unavailable; any other refusal: rejected.
 * Nothing here logs, and no message carries a token; the SDK's error is not kept as `cause` either
 * (its request config holds the refresh token and the client secret).
 */
export class GoogleOAuth {
  constructor(private readonly opts: GoogleOAuthOptions) {}

  async refresh(refreshToken: string, signal?: AbortSignal): Promise<GoogleAccessToken> {
    const client = this.client(signal);
    client.setCredentials({ refresh_token: refreshToken });
    try {
      const { token } = await client.getAccessToken();
      if (!token) throw new ProviderError('rejected', 'the Google token endpoint answered without an access token');
      const { expiry_date: expiry, scope } = client.credentials;
      return { accessToken: token, expiresAt: typeof expiry === 'number' ? new Date(expiry) : null, scope: scope ?? null };
    } catch (err) {
      throw tokenError(err, 'token refresh');
    }
  }

  /**
   * Where the host consents: authorization code flow with PKCE (S256), a refresh token asked for
   * (`access_type=offline`) and the consent screen always shown (`prompt=consent`: Google hands out a
   * refresh token only at consent). Built locally, no request.
   */
  async authorizationUrl(input: { state: string; codeChallenge: string; redirectUri: string }): Promise<string> {
    return this.client().generateAuthUrl({
      access_type: 'offline',
      prompt: 'consent',
      scope: GOOGLE_SCOPES,
      state: input.state,
      code_challenge: input.codeChallenge,
      code_challenge_method: CodeChallengeMethod.S256,
      redirect_uri: input.redirectUri,
    });
  }

  /** authorization_code grant (PKCE verifier, the same redirect URI); the answer must carry a refresh token. */
  async exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }, signal?: AbortSignal): Promise<OAuthGrant> {
    try {
      const { tokens } = await this.client(signal).getToken({ code: input.code, codeVerifier: input.codeVerifier, redirect_uri: input.redirectUri });
      if (!tokens.access_token) throw new ProviderError('rejected', 'the Google token endpoint answered without an access token');
      // Only at consent with access_type=offline (both asked for): without it the connection could not last an hour.
      if (!tokens.refresh_token) throw new ProviderError('rejected', 'the Google token endpoint answered without a refresh token');
      const expiry = tokens.expiry_date;
      return {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        expiresAt: typeof expiry === 'number' ? new Date(expiry) : null,
        account: accountOf(tokens.id_token, this.opts.clientId),
      };
    } catch (err) {
      throw tokenError(err, 'code exchange');
    }
  }

  /** Revokes the grant (refresh token and its access tokens). A token Google no longer knows counts as revoked. */
  async revoke(token: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.client(signal).revokeToken(token);
    } catch (err) {
      const e = err as ErrorLike;
      const data = e.response?.data as { error?: unknown } | undefined;
      if (e.response?.status === 400 && data?.error === 'invalid_token') return;
      throw tokenError(err, 'token revocation');
    }
  }

  /**
   * One OAuth2Client per call (they are cheap and keep per-token state). google-auth-library sends
   * token requests with its own retry config (gaxios: 3 more tries of a 429/5xx, 2 of no answer,
   * backoff up to seconds, Retry-After not read): that would blow the caller's bound, and the token
   * store has its own schedule (a failed refresh is tried again by the next operation). So a request
   * interceptor on the client's transporter (gaxios' documented hook) turns retries off and bounds
   * the one try by `timeoutMs` and the caller's signal.
   */
  private client(signal?: AbortSignal): OAuth2Client {
    const client = new OAuth2Client({
      clientId: this.opts.clientId,
      clientSecret: this.opts.clientSecret,
      endpoints: this.opts.endpoints,
      // Node's own fetch (gaxios' documented `fetchImplementation`), as for the Calendar API (google-provider.ts).
      transporterOptions: { fetchImplementation: fetch },
    });
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    const bound = signal ? AbortSignal.any([signal, timeout]) : timeout;
    client.transporter.interceptors.request.add({
      resolved: async (config) => ({ ...config, retry: false, retryConfig: undefined, signal: bound }),
    });
    return client;
  }
}

/**
 * The verified email address an id token names, or null (no id token, not for this client, not from
 * Google, address not verified, unreadable). Its signature is not checked: the token came in the
 * answer of Google's token endpoint over TLS to this service, which OpenID Connect Core §3.1.3.7
 * allows in place of the signature; and the name is only shown, never used to authorize anything.
 */
export function accountOf(idToken: string | null | undefined, clientId: string): string | null {
  const payload = idToken?.split('.')[1];
  if (!payload) return null;
  let claims: { iss?: unknown; aud?: unknown; email?: unknown; email_verified?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    return null;
  }
  if (!claims || typeof claims !== 'object') return null;
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (typeof claims.iss !== 'string' || !GOOGLE_ISSUERS.has(claims.iss) || !audience.includes(clientId)) return null;
  if (claims.email_verified !== true || typeof claims.email !== 'string' || claims.email.length === 0 || claims.email.length > 320) return null;
  return claims.email;
}

function tokenError(err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as ErrorLike;
  const status = typeof e.response?.status === 'number' ? e.response.status : null;
  const data = e.response?.data as { error?: unknown } | undefined;
  const code = typeof data?.error === 'string' ? data.error : null;
  if (code === 'invalid_grant') return new ProviderError('reauthorization_required', `${what}: Google answered invalid_grant (the authorization was revoked or expired)`);
  if (code === 'invalid_client' || code === 'unauthorized_client') return new ProviderError('auth_failed', `${what}: Google refused this service's OAuth client (${code})`);
  if (status === null || status === 429 || status >= 500) return new ProviderError('unavailable', `${what}: the Google token endpoint ${status === null ? 'could not be reached in time' : `answered ${status}`}`);
  return new ProviderError('rejected', `${what}: the Google token endpoint answered ${status}${code ? ` (${code})` : ''}`);
}
