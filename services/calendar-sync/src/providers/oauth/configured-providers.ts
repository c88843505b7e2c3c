import { readFileSync } from 'node:fs';
import type { CalendarSyncConfig } from '../../config';
import type { CalendarProvider, ProviderName } from '../../domain/calendar-provider';
import type { GrantRevoker, OAuthAuthorizer, OAuthProviderName, SecretSealer, Store, TokenRows } from '../../domain/ports';
import { GoogleCalendarProvider } from '../google/google-provider';
import { GoogleOAuth } from '../google/oauth';
import { createHttpsTransport } from '../microsoft/https-transport';
import { MicrosoftProvider } from '../microsoft/microsoft-provider';
import { MicrosoftOAuth } from '../microsoft/oauth';
import { ConnectionTokenStore, type TokenEndpoint } from './token-store';

type OAuthConfig = Pick<
  CalendarSyncConfig,
  | 'PROVIDER_TIMEOUT_MS'
  | 'GOOGLE_OAUTH_CLIENT_ID'
  | 'GOOGLE_OAUTH_CLIENT_SECRET'
  | 'GOOGLE_API_ROOT_URL'
  | 'GOOGLE_OAUTH_AUTH_URL'
  | 'GOOGLE_OAUTH_TOKEN_URL'
  | 'GOOGLE_OAUTH_REVOKE_URL'
  | 'MICROSOFT_OAUTH_CLIENT_ID'
  | 'MICROSOFT_OAUTH_CLIENT_SECRET'
  | 'MICROSOFT_OAUTH_TENANT'
  | 'MICROSOFT_AUTHORITY_URL'
  | 'MICROSOFT_CA_FILE'
>;

export interface OAuthProviders {
  /** The adapters of the providers whose OAuth client is configured (none: empty). */
  adapters: Partial<Record<ProviderName, CalendarProvider>>;
  /** Revocation at disconnect: Google only (Microsoft has no revocation of one grant). */
  revokers: Partial<Record<ProviderName, GrantRevoker>>;
  /** Their authorization endpoints (the connect flow). */
  authorizers: Partial<Record<OAuthProviderName, OAuthAuthorizer>>;
  /** Their shared token store (null when no OAuth provider is configured). */
  tokens: ConnectionTokenStore | null;
  close(): void;
}

const MICROSOFT_LOGIN = 'https://login.microsoftonline.com';

/**
 * The Google and Microsoft adapters, each only when its client id and secret are set, with one token
 * store for both (tokens sealed in `connection_tokens`, refreshed by one replica at a time).
 */
export function configuredOAuthProviders(
  config: OAuthConfig,
  deps: { rows: TokenRows; sealer: SecretSealer; store: Pick<Store, 'findConnection' | 'setConnectionStatus'>; onWarning: (message: string, meta: Record<string, unknown>) => void },
): OAuthProviders {
  const endpoints: Partial<Record<ProviderName, TokenEndpoint>> = {};
  const authorizers: Partial<Record<OAuthProviderName, OAuthAuthorizer>> = {};
  const revokers: Partial<Record<ProviderName, GrantRevoker>> = {};
  const closers: Array<() => void> = [];
  const timeoutMs = config.PROVIDER_TIMEOUT_MS;
  if (config.GOOGLE_OAUTH_CLIENT_ID && config.GOOGLE_OAUTH_CLIENT_SECRET) {
    const google = new GoogleOAuth({
      clientId: config.GOOGLE_OAUTH_CLIENT_ID,
      clientSecret: config.GOOGLE_OAUTH_CLIENT_SECRET,
      endpoints: {
        ...(config.GOOGLE_OAUTH_AUTH_URL ? { oauth2AuthBaseUrl: config.GOOGLE_OAUTH_AUTH_URL } : {}),
        ...(config.GOOGLE_OAUTH_TOKEN_URL ? { oauth2TokenUrl: config.GOOGLE_OAUTH_TOKEN_URL } : {}),
        ...(config.GOOGLE_OAUTH_REVOKE_URL ? { oauth2RevokeUrl: config.GOOGLE_OAUTH_REVOKE_URL } : {}),
      },
      timeoutMs,
    });
    endpoints.google = google;
    authorizers.google = google;
    revokers.google = google;
  }
  let transport: ReturnType<typeof createHttpsTransport> | null = null;
  if (config.MICROSOFT_OAUTH_CLIENT_ID && config.MICROSOFT_OAUTH_CLIENT_SECRET) {
    transport = createHttpsTransport(config.MICROSOFT_CA_FILE ? { ca: readFileSync(config.MICROSOFT_CA_FILE) } : {});
    const t = transport;
    closers.push(() => t.close());
    const login = new URL(config.MICROSOFT_AUTHORITY_URL);
    const microsoft = new MicrosoftOAuth({
      clientId: config.MICROSOFT_OAUTH_CLIENT_ID,
      clientSecret: config.MICROSOFT_OAUTH_CLIENT_SECRET,
      authority: `${login.origin}/${config.MICROSOFT_OAUTH_TENANT}`,
      // Another login host (a sovereign cloud, a test fake) is trusted as given, without asking
      // login.microsoftonline.com's instance discovery about it.
      ...(login.origin !== MICROSOFT_LOGIN ? { knownAuthorities: [login.host] } : {}),
      timeoutMs,
      transport: t,
    });
    endpoints.microsoft = microsoft;
    authorizers.microsoft = microsoft;
  }
  if (Object.keys(endpoints).length === 0) return { adapters: {}, authorizers, revokers, tokens: null, close: () => undefined };

  const tokens = new ConnectionTokenStore({ rows: deps.rows, sealer: deps.sealer, store: deps.store, endpoints, onWarning: deps.onWarning, lockTimeoutMs: timeoutMs });
  const adapters: Partial<Record<ProviderName, CalendarProvider>> = {};
  if (endpoints.google) adapters.google = new GoogleCalendarProvider({ tokens, timeoutMs, ...(config.GOOGLE_API_ROOT_URL ? { rootUrl: config.GOOGLE_API_ROOT_URL } : {}) });
  if (endpoints.microsoft && transport) adapters.microsoft = new MicrosoftProvider({ tokens, transport, timeoutMs, onWarning: deps.onWarning });
  return { adapters, authorizers, revokers, tokens, close: () => closers.forEach((c) => c()) };
}
