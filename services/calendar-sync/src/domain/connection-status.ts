import { makeEvent, type CalendarErrorCode } from '@sched/contracts';
import { ProviderError, type CalendarAccess, type ProviderErrorKind } from './calendar-provider';
import type { Connection, OutboxEvent, SecretSealer, Store } from './ports';

/** decisions.md §6 error codes of a failed provider call. */
export function calendarErrorCode(kind: ProviderErrorKind): CalendarErrorCode {
  switch (kind) {
    case 'unavailable':
      return 'provider_unavailable';
    case 'auth_failed':
    // A revoked OAuth grant: decisions.md §6's list has no code of its own for it.
    case 'reauthorization_required':
      return 'auth_failed';
    case 'calendar_not_found':
    case 'not_calendar_server':
      return 'calendar_not_found';
    case 'rejected':
      return 'rejected';
  }
}

/**
 * Failures that retrying will not fix and that make the host unbookable until an admin acts. An
 * unreachable provider is not one: it usually passes, and rule 5 (fail closed, 503) already covers it;
 * flipping `bookable` off for every short outage would turn 503s into 409s.
 */
export function isConnectionBroken(kind: ProviderErrorKind): boolean {
  return kind === 'auth_failed' || kind === 'reauthorization_required' || kind === 'calendar_not_found' || kind === 'not_calendar_server';
}

export function connectionUpdatedEvent(
  conn: Pick<Connection, 'workspaceId' | 'hostId'>,
  status: 'connected' | 'error' | 'disconnected',
  errorCode: CalendarErrorCode | null,
): OutboxEvent {
  return makeEvent('calendar.connection_updated', { workspaceId: conn.workspaceId, data: { host_id: conn.hostId, status, error_code: errorCode } });
}

/** Associated data of a sealed password: a sealed value copied onto another host's row does not open. */
export function passwordAad(workspaceId: string, hostId: string): string {
  return `calendar_sync.connection:${workspaceId}:${hostId}`;
}

/** Associated data of a started OAuth flow's PKCE verifier (store: oauth_states). */
export function oauthStateAad(workspaceId: string, hostId: string): string {
  return `calendar_sync.oauth_state:${workspaceId}:${hostId}`;
}

/** Associated data of a connection's sealed OAuth tokens (access token, rotated refresh token): not interchangeable with the password. */
export function tokenAad(workspaceId: string, hostId: string): string {
  return `calendar_sync.connection_token:${workspaceId}:${hostId}`;
}

/** Credentials to call the provider. A password that no configured key opens counts as refused credentials. */
export function accessFor(conn: Connection, sealer: SecretSealer): CalendarAccess {
  let password: string;
  try {
    password = sealer.open(conn.passwordSealed, passwordAad(conn.workspaceId, conn.hostId));
  } catch (err) {
    // The SecretsError names the key id the value needs (`… uses key id "k1", which is not in SECRETS_KEYS`), never a key.
    throw new ProviderError('auth_failed', `stored calendar credentials cannot be decrypted with the configured keys: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    provider: conn.provider,
    url: conn.url,
    username: conn.username,
    password,
    calendarUrl: conn.calendarUrl,
    connection: { id: conn.id, workspaceId: conn.workspaceId, hostId: conn.hostId },
  };
}

/** A provider call for this connection failed: mark it broken when the failure is persistent. */
export async function noteProviderFailure(store: Pick<Store, 'setConnectionStatus'>, conn: Connection, err: ProviderError): Promise<void> {
  if (!isConnectionBroken(err.kind)) return;
  const code = calendarErrorCode(err.kind);
  const status = err.kind === 'reauthorization_required' ? 'reauthorization_required' : 'error';
  // Availability only tells connected from broken: both broken states are `error` in the event.
  await store.setConnectionStatus(conn, status, code, connectionUpdatedEvent(conn, 'error', code));
}

/** A provider call for this connection worked: a broken connection has recovered. */
export async function noteProviderSuccess(store: Store, conn: Connection): Promise<void> {
  if (conn.status === 'connected') return;
  await store.setConnectionStatus(conn, 'connected', null, connectionUpdatedEvent(conn, 'connected', null));
}
