import type { Booking, CalendarErrorCode, EventMessage, InternalHost } from '@sched/contracts';
import type { BusyItem, Interval } from './busy-times';
import type { ProviderName } from './calendar-provider';

/** What the use cases need from storage, the host directory and the secret box; implemented outside domain/. */

/**
 * `error`: a provider call failed in a way retrying will not fix (error_code says which);
 * `reauthorization_required`: the OAuth grant was revoked or expired (invalid_grant): only the host
 * consenting again (the OAuth connect flow) brings it back. Both make the host unbookable.
 */
export type ConnectionStatus = 'connected' | 'error' | 'reauthorization_required';

export interface Connection {
  id: string;
  workspaceId: string;
  hostId: string;
  provider: ProviderName;
  url: string;
  username: string;
  passwordSealed: string;
  calendarUrl: string;
  hostTimezone: string;
  conferencingUrlTemplate: string | null;
  status: ConnectionStatus;
  errorCode: CalendarErrorCode | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewConnection = Omit<Connection, 'createdAt' | 'updatedAt' | 'status' | 'errorCode'>;

export interface Snapshot {
  connectionId: string;
  range: Interval;
  fetchedAt: Date;
  changeMarker: string | null;
  items: BusyItem[];
}

export type SyncStatus = 'pending' | 'synced' | 'failed';

export interface SyncRecord {
  bookingId: string;
  workspaceId: string;
  hostId: string;
  /** The newest Booking state seen, whether or not the calendar matches it yet. */
  booking: Booking;
  bookingVersion: number;
  /** The Booking version the calendar matches; 0 before the first write. */
  writtenVersion: number;
  status: SyncStatus;
  errorCode: CalendarErrorCode | null;
  eventUid: string;
  objectUrl: string | null;
  etag: string | null;
  joinUrl: string | null;
  updatedAt: Date;
}

export type SyncRecordChange = Pick<SyncRecord, 'writtenVersion' | 'status' | 'errorCode' | 'objectUrl' | 'etag' | 'joinUrl'>;

/** An internal event to publish through the outbox, in the same transaction as the change it reports. */
export type OutboxEvent = EventMessage<'calendar.synced' | 'calendar.sync_failed' | 'calendar.connection_updated'>;

export interface Store {
  findConnection(workspaceId: string, hostId: string): Promise<Connection | null>;
  /** Inserts or replaces the host's connection (keeping its id), drops its snapshot, enqueues the event. */
  saveConnection(conn: NewConnection, event: OutboxEvent): Promise<{ connection: Connection; created: boolean }>;
  /** Removes the connection and its snapshot and enqueues the event; false when there was none. */
  deleteConnection(workspaceId: string, hostId: string, event: OutboxEvent): Promise<boolean>;
  /** Changes status only if it differs, and enqueues the event only then; true when it changed. */
  setConnectionStatus(conn: Connection, status: ConnectionStatus, errorCode: CalendarErrorCode | null, event: OutboxEvent): Promise<boolean>;
  updateHostDetails(conn: Connection, details: { hostTimezone: string; conferencingUrlTemplate: string | null }): Promise<void>;
  /** Records that the host's busy times were asked for (throttled: at most one write a minute). */
  noteQueried(conn: Connection): Promise<void>;

  getSnapshot(conn: Connection): Promise<Snapshot | null>;
  saveSnapshot(conn: Connection, snapshot: Snapshot): Promise<void>;
  /** The provider confirmed nothing changed: the snapshot is fresh as of `fetchedAt`. */
  touchSnapshot(conn: Connection, fetchedAt: Date): Promise<void>;
  /** Which of these Booking ids have sync records for this host (their events are this service's own). */
  ownBookingIds(workspaceId: string, hostId: string, bookingIds: readonly string[]): Promise<Set<string>>;

  /** Creates the record if new, stores `booking` if newer than the one kept, and locks the row until commit. */
  lockSyncRecord(workspaceId: string, booking: Booking, eventUid: string): Promise<SyncRecord>;
  /** Locks an existing record; null when the Booking is unknown in this workspace. */
  lockExistingSyncRecord(workspaceId: string, bookingId: string): Promise<SyncRecord | null>;
  updateSyncRecord(record: SyncRecord, change: SyncRecordChange, event: OutboxEvent | null): Promise<SyncRecord>;

  /** Runs fn in one transaction with a store bound to it. */
  transaction<T>(fn: (store: Store) => Promise<T>): Promise<T>;
}

/** Which connection: what its OAuth tokens are kept under. */
export interface ConnectionRef {
  id: string;
  workspaceId: string;
  hostId: string;
}

/** An OAuth connection's stored token state; tokens sealed (`tokenAad`), the password too (`passwordAad`). */
export interface StoredTokens {
  /** The connection's password: the refresh token of the grant the connection was made with. */
  passwordSealed: string;
  accessTokenSealed: string | null;
  accessTokenExpiresAt: Date | null;
  /** The refresh token the token endpoint handed back in place of the password's (rotation); null: none. */
  refreshTokenSealed: string | null;
}

export type TokenChange = Pick<StoredTokens, 'accessTokenSealed' | 'accessTokenExpiresAt' | 'refreshTokenSealed'>;

/** Storage of OAuth token state per connection (store/token.queries.ts). */
export interface TokenRows {
  /** The connection's token state as committed, without a lock; null when the connection does not exist. */
  read(conn: ConnectionRef): Promise<StoredTokens | null>;
  /**
   * Runs `fn` in one transaction holding the row lock of the connection's token state (one holder at a
   * time across replicas; waits at most `lockTimeoutMs`, then throws). `fn` sees the state as of the
   * lock (null: no such connection) and may `save` a change, committed when `fn` returns.
   */
  whileLocked<T>(conn: ConnectionRef, lockTimeoutMs: number, fn: (state: StoredTokens | null, save: (change: TokenChange) => Promise<void>) => Promise<T>): Promise<T>;
}

/** availability's internal host API. null: no such host in the workspace. Throws DomainError upstream_unavailable when unreachable. */
export interface HostDirectory {
  getHost(workspaceId: string, hostId: string): Promise<InternalHost | null>;
}

/** @sched/secrets SecretBox. */
export interface SecretSealer {
  seal(plaintext: string, associatedData?: string): string;
  open(sealed: string, associatedData?: string): string;
}

/** The providers a host connects through the OAuth authorization code flow. */
export type OAuthProviderName = 'google' | 'microsoft';

/** A started OAuth connect flow as stored (store/oauth-state.queries.ts): the state only as its hash. */
export interface OAuthState {
  /** SHA-256 of the `state` sent to the provider, hex. */
  stateHash: string;
  workspaceId: string;
  hostId: string;
  provider: OAuthProviderName;
  /** The calendar asked for; null: the account's primary calendar. */
  calendarId: string | null;
  /** The PKCE code verifier, sealed (`oauthStateAad`). */
  verifierSealed: string;
  expiresAt: Date;
}

export interface OAuthStates {
  save(state: OAuthState): Promise<void>;
  /**
   * Marks the state used, atomically, if it exists, is unused and has not expired; returns it then,
   * else null (unknown, used or expired: the same refusal).
   */
  consume(stateHash: string): Promise<OAuthState | null>;
}

/** What an authorization code is exchanged for. */
export interface OAuthGrant {
  accessToken: string;
  refreshToken: string;
  /** null: the answer had no lifetime. */
  expiresAt: Date | null;
  /** The account's name when the provider says it (Microsoft's id token); null otherwise. */
  account: string | null;
}

/** A provider's authorization and token endpoints (GoogleOAuth, MicrosoftOAuth) for the connect flow. */
export interface OAuthAuthorizer {
  /** The authorization URL (code flow, PKCE S256, offline access) for this state and challenge. Throws ProviderError. */
  authorizationUrl(input: { state: string; codeChallenge: string; redirectUri: string }): Promise<string>;
  /** authorization_code grant with the PKCE verifier. Throws ProviderError (a refused code: reauthorization_required). */
  exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }): Promise<OAuthGrant>;
}

/** A provider's token revocation (GoogleOAuth.revoke); Microsoft has none for one grant. Throws ProviderError. */
export interface GrantRevoker {
  revoke(token: string): Promise<void>;
}
