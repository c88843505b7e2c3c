import {
  ConfidentialClientApplication,
  InteractionRequiredAuthError,
  LogLevel,
  ServerError,
  type INetworkModule,
  type NetworkRequestOptions,
  type NetworkResponse,
} from '@azure/msal-node';
import { ProviderError } from '../../domain/calendar-provider';
import type { OAuthGrant } from '../../domain/ports';
import type { HttpsTransport } from './https-transport';

/** Delegated permission the adapter needs: read busy times, write the Booking events. offline_access gives the refresh token. */
export const GRAPH_SCOPES = ['https://graph.microsoft.com/Calendars.ReadWrite', 'offline_access'];

/** Any work or school account (multi-tenant app registration). */
export const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com/organizations';

export interface MicrosoftOAuthOptions {
  clientId: string;
  clientSecret: string;
  /** https only (MSAL refuses anything else). Default: DEFAULT_AUTHORITY. */
  authority?: string;
  /**
   * Hosts (`host[:port]`) MSAL may trust without asking login.microsoftonline.com's instance
   * discovery: tests give their local fake here. Production leaves it empty.
   */
  knownAuthorities?: string[];
  /** Bound on one token request (MSAL's own network calls included). */
  timeoutMs: number;
  /** The HTTPS transport MSAL's network calls go through (`system.networkClient`). */
  transport: HttpsTransport;
  scopes?: string[];
}

export interface RefreshedToken {
  accessToken: string;
  expiresAt: Date;
  /**
   * The refresh token the endpoint handed back with this answer, when it rotated it (store it in place
   * of the old one); null when MSAL kept none.
   */
  refreshToken: string | null;
}

/**
 * MSAL's network module over our HTTPS transport: MSAL parses JSON bodies itself from `body`. Every
 * request is bounded by `timeoutMs`; failures reach MSAL as thrown errors (it reports them as
 * network errors), so a token endpoint that cannot be reached ends as `unavailable`.
 */
export function msalNetworkClient(transport: HttpsTransport, timeoutMs: number): INetworkModule {
  const send = async <T>(method: 'GET' | 'POST', url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> => {
    const res = await transport(url, { method, headers: options?.headers, body: options?.body, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: T;
    try {
      body = JSON.parse(text) as T;
    } catch {
      throw new Error(`the token endpoint answered ${res.status} without a JSON body`);
    }
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => (headers[name] = value));
    return { status: res.status, headers, body };
  };
  return {
    sendGetRequestAsync: <T>(url: string, options?: NetworkRequestOptions) => send<T>('GET', url, options),
    sendPostRequestAsync: <T>(url: string, options?: NetworkRequestOptions) => send<T>('POST', url, options),
  };
}

/**
 * The Microsoft identity platform's token endpoint, through MSAL's ConfidentialClientApplication:
 * what the connection's token store calls to turn a stored refresh token into an access token.
 * Microsoft has no revocation endpoint for a single refresh token (revocation is per user, in Entra
 * ID), so disconnect just forgets the tokens.
 *
 * MSAL keeps the tokens it receives in its in-memory cache; this service stores tokens itself (sealed,
 * in the connection row), so each account is removed from MSAL's cache once its answer is read.
 */
export class MicrosoftOAuth {
  private readonly app: ConfidentialClientApplication;
  private readonly scopes: string[];

  constructor(private readonly opts: MicrosoftOAuthOptions) {
    this.scopes = opts.scopes ?? GRAPH_SCOPES;
    this.app = new ConfidentialClientApplication({
      auth: {
        clientId: opts.clientId,
        clientSecret: opts.clientSecret,
        authority: opts.authority ?? DEFAULT_AUTHORITY,
        ...(opts.knownAuthorities ? { knownAuthorities: opts.knownAuthorities } : {}),
      },
      system: {
        networkClient: msalNetworkClient(opts.transport, opts.timeoutMs),
        // MSAL's log lines can carry account names; only errors, never PII.
        loggerOptions: { piiLoggingEnabled: false, logLevel: LogLevel.Error, loggerCallback: () => undefined },
      },
    });
  }

  /**
   * Where the host consents: authorization code flow with PKCE (S256) for GRAPH_SCOPES (MSAL adds
   * openid, profile and offline_access), the account picker shown. MSAL may fetch the authority's
   * metadata first (bounded like a token request).
   */
  async authorizationUrl(input: { state: string; codeChallenge: string; redirectUri: string }): Promise<string> {
    try {
      return await withDeadline(
        this.app.getAuthCodeUrl({
          scopes: this.scopes,
          redirectUri: input.redirectUri,
          state: input.state,
          codeChallenge: input.codeChallenge,
          codeChallengeMethod: 'S256',
          prompt: 'select_account',
        }),
        this.opts.timeoutMs,
      );
    } catch (err) {
      throw tokenError(err);
    }
  }

  /**
   * authorization_code grant (PKCE verifier, the same redirect URI). The refresh token is read from
   * MSAL's cache (it does not return it) and the account dropped from the cache, as after a refresh.
   */
  async exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }): Promise<OAuthGrant> {
    let result: Awaited<ReturnType<ConfidentialClientApplication['acquireTokenByCode']>>;
    try {
      result = await withDeadline(this.app.acquireTokenByCode({ code: input.code, codeVerifier: input.codeVerifier, redirectUri: input.redirectUri, scopes: this.scopes }), this.opts.timeoutMs);
    } catch (err) {
      throw tokenError(err);
    }
    if (!result?.accessToken) throw new ProviderError('unavailable', 'the token endpoint answered without an access token');
    const refreshToken = result.account ? await this.takeRefreshToken(result.account.homeAccountId) : null;
    if (result.account) await this.app.getTokenCache().removeAccount(result.account);
    if (!refreshToken) throw new ProviderError('rejected', 'the token endpoint answered without a refresh token (offline_access not granted)');
    return { accessToken: result.accessToken, refreshToken, expiresAt: result.expiresOn ?? null, account: result.account?.username ? result.account.username : null };
  }

  /** refresh_token grant. invalid_grant (revoked, expired, consent withdrawn) → ProviderError('reauthorization_required'). */
  async refresh(refreshToken: string): Promise<RefreshedToken> {
    let result: Awaited<ReturnType<ConfidentialClientApplication['acquireTokenByRefreshToken']>>;
    try {
      // forceCache: MSAL caches what a refresh-token answer brings only when asked; the rotated refresh token is read from there.
      result = await withDeadline(this.app.acquireTokenByRefreshToken({ refreshToken, scopes: this.scopes, forceCache: true }), this.opts.timeoutMs);
    } catch (err) {
      throw tokenError(err);
    }
    if (!result?.accessToken) throw new ProviderError('unavailable', 'the token endpoint answered without an access token');
    const rotated = result.account ? await this.takeRefreshToken(result.account.homeAccountId) : null;
    if (result.account) await this.app.getTokenCache().removeAccount(result.account);
    return {
      accessToken: result.accessToken,
      expiresAt: result.expiresOn ?? new Date(Date.now() + 5 * 60_000),
      refreshToken: rotated !== null && rotated !== refreshToken ? rotated : null,
    };
  }

  /** The refresh token MSAL cached for the account (public `TokenCache.serialize()` format). */
  private async takeRefreshToken(homeAccountId: string): Promise<string | null> {
    const cache = JSON.parse(this.app.getTokenCache().serialize()) as { RefreshToken?: Record<string, { home_account_id?: string; secret?: string }> };
    for (const entry of Object.values(cache.RefreshToken ?? {})) {
      if (entry.home_account_id === homeAccountId && entry.secret) return entry.secret;
    }
    return null;
  }
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProviderError('unavailable', 'the token endpoint did not answer in time')), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** OAuth errors (RFC 6749 §5.2) that refuse our application itself: its id, secret or request. */
const REFUSED_CLIENT = new Set(['invalid_client', 'unauthorized_client', 'invalid_request', 'invalid_scope', 'unsupported_grant_type']);

/** AADSTS errors that mean "this refresh token will never work again": the host must connect again. */
const REAUTHORIZE = new Set(['invalid_grant', 'interaction_required', 'consent_required', 'login_required']);

/**
 * MSAL's errors as ProviderError. MSAL classifies some invalid_grant answers (sub-errors such as
 * bad_token) as InteractionRequiredAuthError and the rest as ServerError with `errorCode`; both mean
 * the refresh token is dead. Other server answers refuse our client (wrong secret, app disabled);
 * anything else is a network failure, a timeout or MSAL's own throttling after a 429/5xx.
 */
export function tokenError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof InteractionRequiredAuthError || (err instanceof ServerError && REAUTHORIZE.has(err.errorCode))) {
    return new ProviderError('reauthorization_required', `the token endpoint refused the refresh token (${err.errorCode})`, { cause: err });
  }
  if (err instanceof ServerError && REFUSED_CLIENT.has(err.errorCode)) {
    return new ProviderError('auth_failed', `the token endpoint refused the client (${err.errorCode})`, { cause: err });
  }
  return new ProviderError('unavailable', 'the token endpoint could not be used', { cause: err });
}
