import { and, eq, sql } from 'drizzle-orm';
import type { Booking, CalendarErrorCode } from '@sched/contracts';
import type { Db, DbTx } from '@sched/db';
import { enqueueEvent } from '@sched/messaging';
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

/**
 * Creates the record for a new Booking, or keeps `booking` as the newest state if its version is
 * higher than the one stored (a newer state makes the sync pending again); then locks the row so the
 * writers of one Booking (replicas, concurrent deliveries, a resync) take turns.
 */
export async function lockSyncRecord(db: Q, workspaceId: string, booking: Booking, eventUid: string): Promise<SyncRecord> {
  await db
    .insert(b)
    .values({ bookingId: booking.id, workspaceId, hostId: booking.host_id, booking, bookingVersion: booking.version, status: 'pending', eventUid })
    .onConflictDoUpdate({
      target: b.bookingId,
      set: { booking, bookingVersion: booking.version, status: 'pending', errorCode: null, updatedAt: sql`now()` },
      setWhere: sql`${b.bookingVersion} < excluded.booking_version AND ${b.workspaceId} = excluded.workspace_id`,
    });
  const record = await selectForUpdate(db, workspaceId, booking.id);
  // Only possible if a Booking id of another workspace arrived here: never act across workspaces.
  if (!record) throw new Error('booking sync record belongs to another workspace');
  return record;
}

export function lockExistingSyncRecord(db: Q, workspaceId: string, bookingId: string): Promise<SyncRecord | null> {
  return selectForUpdate(db, workspaceId, bookingId);
}

export async function updateSyncRecord(db: Q, record: SyncRecord, change: SyncRecordChange, event: OutboxEvent | null): Promise<SyncRecord> {
  const [row] = await db
    .update(b)
    .set({ ...change, updatedAt: sql`now()` })
    .where(and(eq(b.bookingId, record.bookingId), eq(b.workspaceId, record.workspaceId)))
    .returning(columns);
  if (event) await enqueueEvent(db, outbox, event);
  return toRecord(row!);
}
