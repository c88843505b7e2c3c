import { createHash, randomBytes } from 'node:crypto';
import { DomainError, type OAuthCallbackBody, type StartCalendarOAuthBody } from '@sched/contracts';
import { saveVerifiedConnection } from './calendar-connections';
import { isProviderError, type CalendarProvider, type ProviderErrorKind } from './calendar-provider';
import { oauthStateAad, tokenAad } from './connection-status';
import type { Connection, HostDirectory, OAuthAuthorizer, OAuthGrant, OAuthProviderName, OAuthStates, SecretSealer, Store, TokenRows } from './ports';

/** How long a started connect flow waits for its callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;

export interface OAuthStartDeps {
  hosts: HostDirectory;
  states: OAuthStates;
  /** The providers whose OAuth client is configured. */
  authorizers: Partial<Record<OAuthProviderName, OAuthAuthorizer>>;
  sealer: SecretSealer;
  /** The gateway's public callback (OAUTH_REDIRECT_URL), registered with each provider. */
  redirectUri: string;
  now: () => Date;
}

export interface OAuthStart {
  provider: OAuthProviderName;
  authorizationUrl: string;
  expiresAt: Date;
}

/**
 * POST …/calendar/oauth: the host must exist and the provider's OAuth client be configured. A random
 * `state` (256 bits) and PKCE verifier are made; the state is kept only as its SHA-256, bound to the
 * workspace, host and provider, the verifier sealed, both for OAUTH_STATE_TTL_MS and one callback.
 * The answer is the provider's authorization URL carrying the state and the S256 challenge.
 */
export async function startCalendarOAuth(deps: OAuthStartDeps, input: { workspaceId: string; hostId: string; body: StartCalendarOAuthBody }): Promise<OAuthStart> {
  const { workspaceId, hostId, body } = input;
  const host = await deps.hosts.getHost(workspaceId, hostId);
  if (!host) throw new DomainError('not_found');
  const authorizer = deps.authorizers[body.provider];
  if (!authorizer) {
    throw new DomainError('invalid_reference', { message: 'This calendar provider is not configured on this service.', details: [{ field: 'provider', issue: 'not_configured' }] });
  }

  const state = randomToken();
  const verifier = randomToken();
  let authorizationUrl: string;
  try {
    authorizationUrl = await authorizer.authorizationUrl({ state, codeChallenge: pkceChallenge(verifier), redirectUri: deps.redirectUri });
  } catch (err) {
    if (isProviderError(err)) throw new DomainError('upstream_unavailable', { message: "The calendar provider's sign-in service could not be reached." });
    throw err;
  }

  const expiresAt = new Date(deps.now().getTime() + OAUTH_STATE_TTL_MS);
  await deps.states.save({
    stateHash: hashState(state),
    workspaceId,
    hostId,
    provider: body.provider,
    calendarId: body.calendar_id ?? null,
    verifierSealed: deps.sealer.seal(verifier, oauthStateAad(workspaceId, hostId)),
    expiresAt,
  });
  return { provider: body.provider, authorizationUrl, expiresAt };
}

export interface OAuthCallbackDeps extends OAuthStartDeps {
  store: Store;
  provider: CalendarProvider;
  tokens: TokenRows;
  /** Each provider's API base, stored as the connection's `url` (from config, never from input). */
  apiUrls: Record<OAuthProviderName, string>;
  /** Longest wait for the token row's lock when storing the first access token. */
  lockTimeoutMs: number;
}

/** Why a code exchange failed, by the ProviderError kind: the detail's issue and the page's words. */
const EXCHANGE_FAILURES: Record<ProviderErrorKind, [issue: string, message: string]> = {
  reauthorization_required: ['code_refused', 'The calendar provider refused the sign-in code (expired, already used, or not issued for this service); start connecting again.'],
  auth_failed: ['client_refused', "The calendar provider refused this service's OAuth client; the operator must check its client id and secret."],
  unavailable: ['provider_unreachable', "The calendar provider's sign-in service could not be reached; start connecting again later."],
  rejected: ['rejected', 'The calendar provider refused the sign-in (no offline access granted, or another refusal); start connecting again.'],
  calendar_not_found: ['rejected', 'The calendar provider refused the sign-in; start connecting again.'],
  not_calendar_server: ['rejected', 'The calendar provider refused the sign-in; start connecting again.'],
};

/** Why the calendar check after a successful sign-in failed. */
const VERIFY_FAILURES: Record<ProviderErrorKind, [issue: string, message: string]> = {
  calendar_not_found: ['calendar_not_found', 'The calendar was not found, or the account cannot write events in it.'],
  auth_failed: ['auth_failed', 'The calendar provider refused the new authorization for the calendar.'],
  reauthorization_required: ['auth_failed', 'The calendar provider refused the new authorization for the calendar.'],
  unavailable: ['provider_unreachable', 'The calendar provider could not be reached; start connecting again later.'],
  rejected: ['rejected', 'The calendar provider refused the request.'],
  not_calendar_server: ['rejected', 'The calendar provider refused the request.'],
};

function refused(field: string, issue: string, message: string): DomainError {
  return new DomainError('invalid_reference', { message, details: [{ field, issue }] });
}

/**
 * The provider redirected the host back (gateway GET /oauth/callback → here). In order: the state is
 * consumed (once, unexpired; unknown, used and expired are one refusal) → a provider `error` (the host
 * declined) is a refusal → the code is exchanged with the sealed PKCE verifier and the same redirect
 * URI → the calendar is verified through the adapter with the fresh access token → the connection is
 * saved as PUT saves one (refresh token sealed as the password, url = the provider's API base from
 * config) and the access token kept in its token row. Nothing here logs, and no message carries the
 * code, the state or a token.
 */
export async function completeCalendarOAuth(deps: OAuthCallbackDeps, input: OAuthCallbackBody): Promise<{ connection: Connection; provider: OAuthProviderName; hostName: string }> {
  const flow = await deps.states.consume(hashState(input.state));
  if (!flow) throw refused('state', 'unknown_or_used', 'This sign-in link is unknown, already used or expired; start connecting again.');
  if (input.error !== undefined) {
    const issue = /^[a-z_]{1,64}$/.test(input.error) ? input.error : 'refused';
    throw refused('error', issue, 'The calendar provider did not grant access (the host declined, or the provider refused).');
  }
  if (input.code === undefined) throw new DomainError('invalid_request', { details: [{ field: 'code', issue: 'required' }] });
  const { workspaceId, hostId, provider } = flow;
  const host = await deps.hosts.getHost(workspaceId, hostId);
  if (!host) throw new DomainError('not_found');
  const authorizer = deps.authorizers[provider];
  if (!authorizer) throw refused('provider', 'not_configured', 'This calendar provider is no longer configured on this service.');

  let codeVerifier: string;
  try {
    codeVerifier = deps.sealer.open(flow.verifierSealed, oauthStateAad(workspaceId, hostId));
  } catch {
    // Its key left the key ring within the flow's 10 minutes.
    throw refused('state', 'unknown_or_used', 'This sign-in link can no longer be used; start connecting again.');
  }
  let grant: OAuthGrant;
  try {
    grant = await authorizer.exchangeCode({ code: input.code, codeVerifier, redirectUri: deps.redirectUri });
  } catch (err) {
    if (!isProviderError(err)) throw err;
    const [issue, message] = EXCHANGE_FAILURES[err.kind];
    throw refused('code', issue, message);
  }

  const url = deps.apiUrls[provider];
  let calendarUrl: string;
  try {
    ({ calendarUrl } = await deps.provider.verify({ provider, url, username: grant.account ?? '', password: grant.refreshToken, calendarUrl: flow.calendarId, accessToken: grant.accessToken }));
  } catch (err) {
    if (!isProviderError(err)) throw err;
    const [issue, message] = VERIFY_FAILURES[err.kind];
    throw refused('calendar_id', issue, message);
  }

  const { connection } = await saveVerifiedConnection(deps, host, { workspaceId, hostId, provider, url, username: grant.account ?? '', password: grant.refreshToken, calendarUrl });
  const expiresAt = grant.expiresAt;
  if (expiresAt) {
    await deps.tokens.whileLocked(connection, deps.lockTimeoutMs, async (_state, save) =>
      save({ accessTokenSealed: deps.sealer.seal(grant.accessToken, tokenAad(workspaceId, hostId)), accessTokenExpiresAt: expiresAt, refreshTokenSealed: null }),
    );
  }
  return { connection, provider, hostName: host.name };
}

/** 32 random bytes, base64url (43 characters: a valid PKCE verifier, RFC 7636 §4.1, and a 256-bit state). */
function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** RFC 7636 §4.2 S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** What a state is stored and looked up under. */
export function hashState(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('hex');
}
