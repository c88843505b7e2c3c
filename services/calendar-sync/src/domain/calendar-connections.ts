import { DomainError, newId, type InternalHost, type PutCalendarConnectionBody } from '@sched/contracts';
import { isProviderError, type CalendarProvider, type ProviderError, type ProviderErrorKind, type ProviderName } from './calendar-provider';
import { connectionUpdatedEvent, passwordAad } from './connection-status';
import type { Connection, GrantRevoker, HostDirectory, SecretSealer, Store } from './ports';

export interface ConnectionDeps {
  store: Store;
  hosts: HostDirectory;
  provider: CalendarProvider;
  sealer: SecretSealer;
  /** Where a disconnected OAuth grant is revoked (Google); a provider without one just forgets it. */
  revokers?: Partial<Record<ProviderName, GrantRevoker>>;
  /** Told when a revocation failed (never given the token). */
  onWarning?: (message: string, meta: Record<string, unknown>) => void;
}

/**
 * Why saving a connection failed, as 422 invalid_reference ("the request refers to a resource that
 * cannot be used here") with the field at fault. Messages name no host, URL or credential.
 */
const CONNECT_FAILURES: Record<ProviderErrorKind, [field: string, issue: string, message: string]> = {
  auth_failed: ['password', 'auth_failed', 'The calendar server refused the username or password.'],
  unavailable: ['url', 'unreachable', 'The calendar server could not be reached.'],
  calendar_not_found: ['calendar_url', 'not_found', 'The calendar was not found on the server.'],
  not_calendar_server: ['url', 'not_caldav', 'The URL does not lead to a CalDAV server.'],
  rejected: ['url', 'rejected', 'The calendar server refused the request.'],
  reauthorization_required: ['password', 'reauthorization_required', 'The calendar provider no longer accepts this authorization; connect the calendar again.'],
};

function connectFailure(err: ProviderError): DomainError {
  const [field, issue, message] = CONNECT_FAILURES[err.kind];
  return new DomainError('invalid_reference', { message, details: [{ field, issue }] });
}

function hasUserinfo(url: string | null | undefined): boolean {
  if (!url) return false;
  const parsed = new URL(url);
  return parsed.username !== '' || parsed.password !== '';
}

/**
 * PUT: the host must exist (availability), and server, credentials and calendar must work (checked by
 * talking to the server) before anything is stored. The password is stored sealed only.
 */
export async function connectCalendar(
  deps: ConnectionDeps,
  input: { workspaceId: string; hostId: string; body: PutCalendarConnectionBody },
): Promise<{ connection: Connection; created: boolean }> {
  const { workspaceId, hostId, body } = input;
  // Credentials inside a URL would be stored and shown in plain text: they belong in username/password.
  const withUserinfo = (['url', 'calendar_url'] as const).filter((f) => hasUserinfo(body[f]));
  if (withUserinfo.length > 0) {
    throw new DomainError('invalid_request', { details: withUserinfo.map((field) => ({ field, issue: 'invalid_format' })) });
  }
  const host = await deps.hosts.getHost(workspaceId, hostId);
  if (!host) throw new DomainError('not_found');

  let calendarUrl: string;
  try {
    ({ calendarUrl } = await deps.provider.verify({ provider: body.provider, url: body.url, username: body.username, password: body.password, calendarUrl: body.calendar_url ?? null }));
  } catch (err) {
    if (isProviderError(err)) throw connectFailure(err);
    throw err;
  }

  return saveVerifiedConnection(deps, host, { workspaceId, hostId, provider: body.provider, url: body.url, username: body.username, password: body.password, calendarUrl });
}

/**
 * Stores a connection whose credentials and calendar were just verified (PUT, and the OAuth callback):
 * inserted, or replacing the host's connection under the same id; the password (an OAuth refresh
 * token) sealed; `calendar.connection_updated` connected.
 */
export async function saveVerifiedConnection(
  deps: Pick<ConnectionDeps, 'store' | 'sealer'>,
  host: InternalHost,
  input: { workspaceId: string; hostId: string; provider: ProviderName; url: string; username: string; password: string; calendarUrl: string },
): Promise<{ connection: Connection; created: boolean }> {
  const { workspaceId, hostId } = input;
  const existing = await deps.store.findConnection(workspaceId, hostId);
  return deps.store.saveConnection(
    {
      id: existing?.id ?? newId('cal'),
      workspaceId,
      hostId,
      provider: input.provider,
      url: input.url,
      username: input.username,
      passwordSealed: deps.sealer.seal(input.password, passwordAad(workspaceId, hostId)),
      calendarUrl: input.calendarUrl,
      hostTimezone: host.timezone,
      conferencingUrlTemplate: host.conferencing_url_template,
    },
    connectionUpdatedEvent({ workspaceId, hostId }, 'connected', null),
  );
}

export async function getConnection(store: Store, workspaceId: string, hostId: string): Promise<Connection> {
  const conn = await store.findConnection(workspaceId, hostId);
  if (!conn) throw new DomainError('not_found');
  return conn;
}

/**
 * DELETE: the host becomes not bookable (calendar_not_connected). Events already written stay in the
 * calendar. An OAuth grant is then revoked at a provider that allows it (Google); a failed revocation
 * is reported as a warning and does not undo or fail the delete. Microsoft has no revocation of one
 * grant (the tokens are forgotten; the user or tenant admin removes the app's consent in their account).
 */
export async function disconnectCalendar(deps: Pick<ConnectionDeps, 'store' | 'sealer' | 'revokers' | 'onWarning'>, workspaceId: string, hostId: string): Promise<void> {
  const conn = await deps.store.findConnection(workspaceId, hostId);
  const removed = await deps.store.deleteConnection(workspaceId, hostId, connectionUpdatedEvent({ workspaceId, hostId }, 'disconnected', null));
  if (!removed) throw new DomainError('not_found');
  const revoker = conn ? deps.revokers?.[conn.provider] : undefined;
  if (conn && revoker) await revokeGrant(deps, conn, revoker);
}

async function revokeGrant(deps: Pick<ConnectionDeps, 'sealer' | 'onWarning'>, conn: Connection, revoker: GrantRevoker): Promise<void> {
  try {
    await revoker.revoke(deps.sealer.open(conn.passwordSealed, passwordAad(conn.workspaceId, conn.hostId)));
  } catch (err) {
    deps.onWarning?.('could not revoke the OAuth grant of a disconnected calendar', { connection: conn.id, provider: conn.provider, error: isProviderError(err) ? err.kind : 'unreadable' });
  }
}

/**
 * Re-reads the host from availability and keeps the connection's copy of its time zone and
 * conferencing template current. Best effort: null when availability cannot answer or the host is gone,
 * and the copy kept with the connection stays in use.
 */
export async function refreshHostDetails(deps: { store: Store; hosts: HostDirectory }, conn: Connection): Promise<InternalHost | null> {
  let host: InternalHost | null;
  try {
    host = await deps.hosts.getHost(conn.workspaceId, conn.hostId);
  } catch {
    return null;
  }
  if (host && (host.timezone !== conn.hostTimezone || host.conferencing_url_template !== conn.conferencingUrlTemplate)) {
    await deps.store.updateHostDetails(conn, { hostTimezone: host.timezone, conferencingUrlTemplate: host.conferencing_url_template });
  }
  return host;
}
