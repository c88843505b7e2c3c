import { index, integer, jsonb, pgSchema, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { outboxTable, inboxTable } from '@sched/messaging';
import type { Booking } from '@sched/contracts';
import type { BusyItem } from '../domain/busy-times';
import type { ProviderName } from '../domain/calendar-provider';

/** Everything this service stores lives in its own schema, readable only by its own login role. */
export const calendarSync = pgSchema('calendar_sync');

/** Events written in the same transaction as the change they announce; relayed to RabbitMQ. */
export const outbox = outboxTable(calendarSync);

/** Ids of consumed events, written with the handler's effect so a redelivery is skipped. */
export const inbox = inboxTable(calendarSync);

/**
 * One calendar connection per host. The password is stored only sealed (AES-256-GCM, @sched/secrets)
 * with the connection and host ids as associated data, so a sealed value copied to another row fails.
 */
export const calendarConnections = calendarSync.table(
  'calendar_connections',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    hostId: text('host_id').notNull(),
    provider: text('provider').$type<ProviderName>().notNull(),
    url: text('url').notNull(),
    username: text('username').notNull(),
    passwordSealed: text('password_sealed').notNull(),
    /** The collection read and written: the one asked for, or the first found by discovery. */
    calendarUrl: text('calendar_url').notNull(),
    /** Copied from availability's host: all-day events block whole local days in this zone. */
    hostTimezone: text('host_timezone').notNull(),
    conferencingUrlTemplate: text('conferencing_url_template'),
    status: text('status').$type<'connected' | 'error' | 'reauthorization_required'>().notNull().default('connected'),
    errorCode: text('error_code'),
    /** Last busy query for this host: the refresher keeps only recently asked-for hosts warm. */
    lastQueriedAt: timestamp('last_queried_at', { withTimezone: true }).notNull().defaultNow(),
    /** A replica refreshing this host holds it until then; others skip it. */
    refreshLeaseUntil: timestamp('refresh_lease_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('calendar_connections_host_uq').on(t.workspaceId, t.hostId), index('calendar_connections_last_queried_idx').on(t.lastQueriedAt)],
);

/**
 * The OAuth token state of a Google or Microsoft connection (none for CalDAV): the current access
 * token and its expiry, and the refresh token the token endpoint handed back in place of the
 * connection's own (`password_sealed`) when it rotates them (Microsoft). Both sealed like the password
 * (associated data: workspace and host, `tokenAad`). A table of its own, not columns of the
 * connection: its row lock (one refresher at a time across replicas) then never waits for, nor blocks,
 * a transaction that updates the connection row, and a token refresh does not NOTIFY every replica's
 * cache of connections. Dropped with the connection, and emptied when the connection is replaced.
 */
export const connectionTokens = calendarSync.table('connection_tokens', {
  connectionId: text('connection_id')
    .primaryKey()
    .references(() => calendarConnections.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull(),
  hostId: text('host_id').notNull(),
  accessTokenSealed: text('access_token_sealed'),
  accessTokenExpiresAt: timestamp('access_token_expires_at', { withTimezone: true }),
  refreshTokenSealed: text('refresh_token_sealed'),
  refreshedAt: timestamp('refreshed_at', { withTimezone: true }),
});

/**
 * A started OAuth connect flow (POST …/calendar/oauth) waiting for its callback: the `state` sent to
 * the provider is kept only as its SHA-256 (a leaked row cannot finish a flow), bound to workspace,
 * host and provider; the PKCE verifier sealed like the passwords (associated data: the state hash).
 * Single use (`used_at`, set atomically by the callback) and valid until `expires_at` (10 minutes).
 */
export const oauthStates = calendarSync.table(
  'oauth_states',
  {
    stateHash: text('state_hash').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    hostId: text('host_id').notNull(),
    provider: text('provider').$type<'google' | 'microsoft'>().notNull(),
    /** The calendar asked for; null: the account's primary calendar. */
    calendarId: text('calendar_id'),
    verifierSealed: text('verifier_sealed').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('oauth_states_expires_idx').on(t.expiresAt)],
);

/**
 * The busy snapshot of one connection: busy items (no titles or other event details) over a cached
 * range, read as a whole, and when it was last confirmed against the provider.
 */
export const busySnapshots = calendarSync.table('busy_snapshots', {
  connectionId: text('connection_id')
    .primaryKey()
    .references(() => calendarConnections.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull(),
  rangeFrom: timestamp('range_from', { withTimezone: true }).notNull(),
  rangeTo: timestamp('range_to', { withTimezone: true }).notNull(),
  /** When the provider last confirmed these items (a full read, or an unchanged ctag). */
  fetchedAt: timestamp('fetched_at', { withTimezone: true }).notNull(),
  /** CalDAV getctag + sync-token at the last full read; null when the server offers neither. */
  changeMarker: text('change_marker'),
  items: jsonb('items').$type<BusyItem[]>().notNull(),
});

/**
 * What the calendar holds for each Booking: the last Booking state seen (for resync), the version the
 * calendar matches, and where the event lives. Its row lock serializes writers of one Booking.
 */
export const bookingSyncs = calendarSync.table(
  'booking_syncs',
  {
    bookingId: text('booking_id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    hostId: text('host_id').notNull(),
    booking: jsonb('booking').$type<Booking>().notNull(),
    bookingVersion: integer('booking_version').notNull(),
    /** 0 until the calendar first matches a version. */
    writtenVersion: integer('written_version').notNull().default(0),
    status: text('status').$type<'pending' | 'synced' | 'failed'>().notNull(),
    errorCode: text('error_code'),
    eventUid: text('event_uid').notNull(),
    /** Where the event was written; null when none exists (never written, or deleted). */
    objectUrl: text('object_url'),
    etag: text('etag'),
    joinUrl: text('join_url'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('booking_syncs_host_idx').on(t.workspaceId, t.hostId)],
);
