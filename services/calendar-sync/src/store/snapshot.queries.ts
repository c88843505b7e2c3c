import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import type { Connection, Snapshot } from '../domain/ports';
import { bookingSyncs, busySnapshots as s } from './schema';

type Q = Db | DbTx;

export async function getSnapshot(db: Q, conn: Connection): Promise<Snapshot | null> {
  const [row] = await db
    .select({ connectionId: s.connectionId, rangeFrom: s.rangeFrom, rangeTo: s.rangeTo, fetchedAt: s.fetchedAt, changeMarker: s.changeMarker, items: s.items })
    .from(s)
    .where(and(eq(s.connectionId, conn.id), eq(s.workspaceId, conn.workspaceId)))
    .limit(1);
  if (!row) return null;
  return { connectionId: row.connectionId, range: { start: row.rangeFrom, end: row.rangeTo }, fetchedAt: row.fetchedAt, changeMarker: row.changeMarker, items: row.items };
}

/**
 * Replaces the snapshot, unless a newer one was saved meanwhile (two readers racing) or the connection
 * was replaced while this one was being read (its calendar or credentials changed: the read is of the
 * old calendar and must not be kept).
 */
export async function saveSnapshot(db: Q, conn: Connection, snap: Snapshot): Promise<void> {
  await db.execute(sql`
    INSERT INTO calendar_sync.busy_snapshots (connection_id, workspace_id, range_from, range_to, fetched_at, change_marker, items)
    SELECT c.id, c.workspace_id, ${snap.range.start.toISOString()}::timestamptz, ${snap.range.end.toISOString()}::timestamptz,
           ${snap.fetchedAt.toISOString()}::timestamptz, ${snap.changeMarker}, ${JSON.stringify(snap.items)}::jsonb
      FROM calendar_sync.calendar_connections c
     WHERE c.id = ${conn.id} AND c.workspace_id = ${conn.workspaceId}
       AND c.calendar_url = ${conn.calendarUrl} AND c.username = ${conn.username} AND c.password_sealed = ${conn.passwordSealed}
    ON CONFLICT (connection_id) DO UPDATE
       SET range_from = excluded.range_from, range_to = excluded.range_to, fetched_at = excluded.fetched_at,
           change_marker = excluded.change_marker, items = excluded.items
     WHERE calendar_sync.busy_snapshots.fetched_at <= excluded.fetched_at`);
}

export async function touchSnapshot(db: Q, conn: Connection, fetchedAt: Date): Promise<void> {
  await db
    .update(s)
    .set({ fetchedAt })
    .where(and(eq(s.connectionId, conn.id), eq(s.workspaceId, conn.workspaceId), lt(s.fetchedAt, fetchedAt)));
}

export async function ownBookingIds(db: Q, workspaceId: string, hostId: string, bookingIds: readonly string[]): Promise<Set<string>> {
  const rows = await db
    .select({ id: bookingSyncs.bookingId })
    .from(bookingSyncs)
    .where(and(eq(bookingSyncs.workspaceId, workspaceId), eq(bookingSyncs.hostId, hostId), inArray(bookingSyncs.bookingId, [...bookingIds])));
  return new Set(rows.map((r) => r.id));
}
