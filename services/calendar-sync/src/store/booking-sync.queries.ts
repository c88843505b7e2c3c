import { and, eq, sql } from 'drizzle-orm';
import type { Booking, CalendarErrorCode } from '@sched/contracts';
import type { Db, DbTx } from '@sched/db';
import { enqueueEventSql } from '@sched/messaging';
import type { OutboxEvent, SyncRecord, SyncRecordChange } from '../domain/ports';
import { bookingSyncs as b, outbox } from './schema';

type Q = Db | DbTx;

const columns = {
  bookingId: b.bookingId,
  workspaceId: b.workspaceId,
  hostId: b.hostId,
  booking: b.booking,
  bookingVersion: b.bookingVersion,
  writtenVersion: b.writtenVersion,
  status: b.status,
  errorCode: b.errorCode,
  eventUid: b.eventUid,
  objectUrl: b.objectUrl,
  etag: b.etag,
  joinUrl: b.joinUrl,
  updatedAt: b.updatedAt,
};

function toRecord(row: Omit<SyncRecord, 'errorCode'> & { errorCode: string | null }): SyncRecord {
  return { ...row, errorCode: row.errorCode as CalendarErrorCode | null };
}

async function selectForUpdate(db: Q, workspaceId: string, bookingId: string): Promise<SyncRecord | null> {
  const [row] = await db
    .select(columns)
    .from(b)
    .where(and(eq(b.bookingId, bookingId), eq(b.workspaceId, workspaceId)))
    .limit(1)
    .for('update');
  return row ? toRecord(row) : null;
}

export interface SyncRow extends Record<string, unknown> {
  booking_id: string;
  workspace_id: string;
  host_id: string;
  booking: Booking | string;
  booking_version: number;
  written_version: number;
  status: SyncRecord['status'];
  error_code: string | null;
  event_uid: string;
  object_url: string | null;
  etag: string | null;
  join_url: string | null;
  updated_at: string | Date;
}

export function fromRow(r: SyncRow): SyncRecord {
  return {
    bookingId: r.booking_id,
    workspaceId: r.workspace_id,
    hostId: r.host_id,
    booking: typeof r.booking === 'string' ? (JSON.parse(r.booking) as Booking) : r.booking,
    bookingVersion: r.booking_version,
    writtenVersion: r.written_version,
    status: r.status,
    errorCode: r.error_code as CalendarErrorCode | null,
    eventUid: r.event_uid,
    objectUrl: r.object_url,
    etag: r.etag,
    joinUrl: r.join_url,
    updatedAt: new Date(r.updated_at),
  };
}

/** The sync record's columns as every statement returns them (alias `b`). */
export const SYNC_RECORD_COLUMNS =
  'b.booking_id, b.workspace_id, b.host_id, b.booking, b.booking_version, b.written_version, b.status, b.error_code, b.event_uid, b.object_url, b.etag, b.join_url, b.updated_at';

const NEWER = '(b.booking_version < excluded.booking_version AND b.workspace_id = excluded.workspace_id)';
/**
 * The conflict arm of the sync record's upsert (alias `b`, the new row `excluded`): it always locks the
 * row and returns it; the CASEs change it only for a newer Booking version of the same workspace, which
 * makes the sync pending again.
 */
export const KEEP_NEWEST_BOOKING = `ON CONFLICT (booking_id) DO UPDATE
       SET booking = CASE WHEN ${NEWER} THEN excluded.booking ELSE b.booking END,
           booking_version = CASE WHEN ${NEWER} THEN excluded.booking_version ELSE b.booking_version END,
           status = CASE WHEN ${NEWER} THEN 'pending' ELSE b.status END,
           error_code = CASE WHEN ${NEWER} THEN NULL ELSE b.error_code END,
           updated_at = CASE WHEN ${NEWER} THEN now() ELSE b.updated_at END`;

/**
 * Creates the record for a new Booking, or keeps `booking` as the newest state if its version is
 * higher than the one stored (a newer state makes the sync pending again); the row stays locked until
 * commit so the writers of one Booking (replicas, concurrent deliveries, a resync) take turns. One
 * statement: ON CONFLICT DO UPDATE always locks the row and returns its newest state; the CASEs leave
 * it unchanged unless the Booking is newer (and of the same workspace).
 */
export async function lockSyncRecord(db: Q, workspaceId: string, booking: Booking, eventUid: string): Promise<SyncRecord> {
  const res = await db.execute<SyncRow>(sql`
    INSERT INTO calendar_sync.booking_syncs AS b (booking_id, workspace_id, host_id, booking, booking_version, status, event_uid)
    VALUES (${booking.id}, ${workspaceId}, ${booking.host_id}, ${JSON.stringify(booking)}::jsonb, ${booking.version}, 'pending', ${eventUid})
    ${sql.raw(KEEP_NEWEST_BOOKING)}
    RETURNING ${sql.raw(SYNC_RECORD_COLUMNS)}`);
  return ownRecord(res.rows[0], workspaceId);
}

/** The locked record, refusing one of another workspace. */
export function ownRecord(row: SyncRow | undefined, workspaceId: string): SyncRecord {
  // Only possible if a Booking id of another workspace arrived here: never act across workspaces.
  if (!row || row.workspace_id !== workspaceId) throw new Error('booking sync record belongs to another workspace');
  return fromRow(row);
}

export function lockExistingSyncRecord(db: Q, workspaceId: string, bookingId: string): Promise<SyncRecord | null> {
  return selectForUpdate(db, workspaceId, bookingId);
}

const RETURNED = sql.raw(SYNC_RECORD_COLUMNS);

/**
 * Records the write's outcome and enqueues its event in one statement: the outbox insert (with the
 * relay's NOTIFY: libs/messaging enqueueEventSql) rides on the update as a data-modifying WITH.
 */
export async function updateSyncRecord(db: Q, record: SyncRecord, change: SyncRecordChange, event: OutboxEvent | null): Promise<SyncRecord> {
  const update = sql`
    UPDATE calendar_sync.booking_syncs b
       SET written_version = ${change.writtenVersion}, status = ${change.status}, error_code = ${change.errorCode},
           object_url = ${change.objectUrl}, etag = ${change.etag}, join_url = ${change.joinUrl}, updated_at = now()
     WHERE b.booking_id = ${record.bookingId} AND b.workspace_id = ${record.workspaceId}
    RETURNING ${RETURNED}`;
  let query = update;
  if (event) {
    query = sql`
      WITH enqueued AS (${enqueueEventSql(outbox, event)} RETURNING 1)
      ${update}`;
  }
  const res = await db.execute<SyncRow>(query);
  return fromRow(res.rows[0]!);
}
