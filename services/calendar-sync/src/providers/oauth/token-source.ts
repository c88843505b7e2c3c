import type { CalendarAccess } from '../../domain/calendar-provider';

/**
 * Where an OAuth provider adapter gets its access tokens. The adapter never refreshes on its own
 * schedule: it asks for the current token before its first request, and when the API refuses a token
 * (401) it reports that token once through `refreshed` and retries once with the answer. The
 * implementation (the connection's token store: one replica refreshes at a time, under a row lock)
 * decides whether a refresh is needed at all: another replica may already have replaced the token.
 *
 * Both methods throw ProviderError: `reauthorization_required` when the token endpoint answers
 * `invalid_grant` (refresh token revoked or expired), `unavailable` when it cannot be reached,
 * `auth_failed` when it refuses the client itself.
 */
export interface OAuthTokenSource {
  /** A usable access token for this connection (cached or refreshed before expiry). */
  accessToken(access: CalendarAccess): Promise<string>;
  /** `rejected` was refused by the API: a token other than it (refreshed now unless already replaced). */
  refreshed(access: CalendarAccess, rejected: string): Promise<string>;
}
