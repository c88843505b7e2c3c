import type { CalendarAccess } from '../../domain/calendar-provider';

/**
 * Where an OAuth provider adapter (Google, Microsoft 365) gets the bearer token for a connection.
 * The adapter never refreshes on its own schedule nor keeps tokens: the implementation (the token
 * store: tokens sealed with the connection, refreshed before expiry by one replica at a time under
 * a row lock) owns that. `access.password` is the connection's secret (its refresh token).
 *
 * Both methods throw ProviderError: `reauthorization_required` when the token endpoint answers
 * `invalid_grant` (the refresh token is revoked or expired), `unavailable` when it cannot be reached
 * in time, `auth_failed` when it refuses this service's own client credentials.
 */
export interface AccessTokenSource {
  /** A token believed valid now (cached, or refreshed when near expiry). */
  accessToken(access: CalendarAccess, signal?: AbortSignal): Promise<string>;
  /**
   * The API refused `rejected` (401) before its known expiry: a token obtained after it (a new one
   * from the token endpoint, or one another replica has refreshed meanwhile). Asked at most once per
   * operation.
   */
  refreshed(access: CalendarAccess, rejected: string, signal?: AbortSignal): Promise<string>;
}
