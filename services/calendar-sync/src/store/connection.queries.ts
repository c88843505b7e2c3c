import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import { enqueueEvent, enqueueEventSql } from '@sched/messaging';
import type { CalendarErrorCode } from '@sched/contracts';
import type { ProviderName } from '../domain/calendar-provider';
import type { Connection, ConnectionStatus, NewConnection, OutboxEvent } from '../domain/ports';
import { busySnapshots, calendarConnections as c, connectionTokens, outbox } from './schema';

type Q = Db | DbTx;

/** Only the columns the domain uses (never the lease or query bookkeeping). */
export const connectionColumns = {
  id: c.id,
  workspaceId: c.workspaceId,
  hostId: c.hostId,
  provider: c.provider,
  url: c.url,
  username: c.username,
  passwordSealed: c.passwordSealed,
  calendarUrl: c.calendarUrl,
  hostTimezone: c.hostTimezone,
  conferencingUrlTemplate: c.conferencingUrlTemplate,
  status: c.status,
  errorCode: c.errorCode,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
};

export function toConnection(row: Omit<Connection, 'errorCode'> & { errorCode: string | null }): Connection {
  return { ...row, errorCode: row.errorCode as CalendarErrorCode | null };
}

export async function findConnection(db: Q, workspaceId: string, hostId: string): Promise<Connection | null> {
  const [row] = await db
    .select(connectionColumns)
    .from(c)
    .where(and(eq(c.workspaceId, workspaceId), eq(c.hostId, hostId)))
    .limit(1);
  return row ? toConnection(row) : null;
}

/** Insert or replace (same id kept), status back to connected, old snapshot dropped, event enqueued: one transaction. */
export async function saveConnection(db: Q, conn: NewConnection, event: OutboxEvent): Promise<{ connection: Connection; created: boolean }> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(c)
      .values({ ...conn, status: 'connected', errorCode: null })
      .onConflictDoUpdate({
        target: [c.workspaceId, c.hostId],
        set: {
          provider: conn.provider,
          url: conn.url,
          username: conn.username,
          passwordSealed: conn.passwordSealed,
          calendarUrl: conn.calendarUrl,
          hostTimezone: conn.hostTimezone,
          conferencingUrlTemplate: conn.conferencingUrlTemplate,
          status: 'connected',
          errorCode: null,
          lastQueriedAt: sql`now()`,
          refreshLeaseUntil: null,
          updatedAt: sql`now()`,
        },
      })
      .returning({ ...connectionColumns, inserted: sql<boolean>`(xmax = 0)` });
    const { inserted, ...saved } = row!;
    // Busy times of the previous calendar or credentials must not be served for the new one.
    await tx.delete(busySnapshots).where(and(eq(busySnapshots.connectionId, saved.id), eq(busySnapshots.workspaceId, conn.workspaceId)));
    // Nor the OAuth tokens of the previous grant (the new password is the new grant's refresh token).
    await tx.delete(connectionTokens).where(and(eq(connectionTokens.connectionId, saved.id), eq(connectionTokens.workspaceId, conn.workspaceId)));
    await enqueueEvent(tx, outbox, event);
    return { connection: toConnection(saved), created: inserted };
  });
}

export async function deleteConnection(db: Q, workspaceId: string, hostId: string, event: OutboxEvent): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The snapshot goes with it (ON DELETE CASCADE).
    const removed = await tx
      .delete(c)
      .where(and(eq(c.workspaceId, workspaceId), eq(c.hostId, hostId)))
      .returning({ id: c.id });
    if (removed.length === 0) return false;
    await enqueueEvent(tx, outbox, event);
    return true;
  });
}

/**
 * One statement, so it is atomic on its own and never opens a transaction of its own: the conditional
 * update, and the outbox row (with the relay's NOTIFY) only when a row changed. Inside the booking.*
 * message's transaction (store/message-transaction.ts) it is one more statement of that transaction.
 */
export async function setConnectionStatus(
  db: Q,
  conn: Connection,
  status: ConnectionStatus,
  errorCode: CalendarErrorCode | null,
  event: OutboxEvent,
): Promise<boolean> {
  const res = await db.execute<{ id: string }>(sql`
    WITH changed AS (
      UPDATE ${c} SET status = ${status}, error_code = ${errorCode}, updated_at = now()
       WHERE id = ${conn.id} AND workspace_id = ${conn.workspaceId}
         -- What was observed concerns these credentials and this calendar: a replaced connection is left alone.
         AND calendar_url = ${conn.calendarUrl} AND username = ${conn.username} AND password_sealed = ${conn.passwordSealed}
         AND (status IS DISTINCT FROM ${status} OR error_code IS DISTINCT FROM ${errorCode})
      RETURNING id
    ), enqueued AS (
      ${enqueueEventSql(outbox, event)} WHERE EXISTS (SELECT 1 FROM changed) RETURNING 1
    )
    SELECT id FROM changed`);
  return res.rows.length > 0;
}

export async function updateHostDetails(db: Q, conn: Connection, details: { hostTimezone: string; conferencingUrlTemplate: string | null }): Promise<void> {
  await db
    .update(c)
    .set({ hostTimezone: details.hostTimezone, conferencingUrlTemplate: details.conferencingUrlTemplate })
    .where(and(eq(c.id, conn.id), eq(c.workspaceId, conn.workspaceId)));
}

/** At most one write a minute per host however many busy queries arrive. */
export async function noteQueried(db: Q, conn: Connection): Promise<void> {
  await db
    .update(c)
    .set({ lastQueriedAt: sql`now()` })
    .where(and(eq(c.id, conn.id), eq(c.workspaceId, conn.workspaceId), lt(c.lastQueriedAt, sql`now() - interval '60 seconds'`)));
}

/**
 * The refresher's claim, across workspaces (like the outbox relay, it serves every tenant): hosts asked
 * for recently whose snapshot is missing or older than `staleAfterMs`, not leased by another replica.
 * FOR UPDATE SKIP LOCKED plus the lease means two replicas never refresh the same host at once, and
 * the lease is held without keeping a transaction open during the provider calls.
 */
export async function claimDueConnections(
  db: Q,
  p: { activeWindowMs: number; staleAfterMs: number; leaseMs: number; limit: number },
): Promise<Connection[]> {
  // Raw SQL: FOR UPDATE OF needs the bare alias, which the query builder does not write.
  const res = await db.execute<ClaimedRow>(sql`
    UPDATE calendar_sync.calendar_connections c
       SET refresh_lease_until = now() + make_interval(secs => ${p.leaseMs / 1000})
     WHERE c.id IN (
       SELECT due.id FROM calendar_sync.calendar_connections due
         LEFT JOIN calendar_sync.busy_snapshots s ON s.connection_id = due.id
        WHERE due.last_queried_at > now() - make_interval(secs => ${p.activeWindowMs / 1000})
          AND (due.refresh_lease_until IS NULL OR due.refresh_lease_until < now())
          AND (s.fetched_at IS NULL OR s.fetched_at < now() - make_interval(secs => ${p.staleAfterMs / 1000}))
        ORDER BY s.fetched_at ASC NULLS FIRST
        LIMIT ${p.limit}
        FOR UPDATE OF due SKIP LOCKED)
    RETURNING c.id, c.workspace_id, c.host_id, c.provider, c.url, c.username, c.password_sealed, c.calendar_url,
              c.host_timezone, c.conferencing_url_template, c.status, c.error_code, c.created_at, c.updated_at`);
  return res.rows.map((r) =>
    toConnection({
      id: r.id,
      workspaceId: r.workspace_id,
      hostId: r.host_id,
      provider: r.provider,
      url: r.url,
      username: r.username,
      passwordSealed: r.password_sealed,
      calendarUrl: r.calendar_url,
      hostTimezone: r.host_timezone,
      conferencingUrlTemplate: r.conferencing_url_template,
      status: r.status,
      errorCode: r.error_code,
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    }),
  );
}

interface ClaimedRow extends Record<string, unknown> {
  id: string;
  workspace_id: string;
  host_id: string;
  provider: ProviderName;
  url: string;
  username: string;
  password_sealed: string;
  calendar_url: string;
  host_timezone: string;
  conferencing_url_template: string | null;
  status: ConnectionStatus;
  error_code: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

export async function releaseLease(db: Q, conn: Connection): Promise<void> {
  await db
    .update(c)
    .set({ refreshLeaseUntil: null })
    .where(and(eq(c.id, conn.id), eq(c.workspaceId, conn.workspaceId)));
}
