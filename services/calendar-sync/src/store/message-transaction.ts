import { drizzle } from 'drizzle-orm/node-postgres';
import { DatabaseError, type Pool, type PoolClient, type QueryResult } from 'pg';
import type { Booking } from '@sched/contracts';
import type { Db } from '@sched/db';
import { assertEnvelope, outboxChannel, outboxNotifyPayload, outboxSchemaName } from '@sched/messaging';
import type { OutboxEvent, Store, SyncRecord, SyncRecordChange } from '../domain/ports';
import { KEEP_NEWEST_BOOKING, ownRecord, SYNC_RECORD_COLUMNS, type SyncRow } from './booking-sync.queries';
import { createStore } from './create-store';
import { outbox } from './schema';
import type { StoreCache } from './store-cache';

/** A booking.* message as the write path records it: its inbox row and the Booking state it carries. */
export interface BookingMessage {
  eventId: string;
  type: string;
  workspaceId: string;
  booking: Booking;
  eventUid: string;
}

/** SQLSTATE of a missing prepared statement (26000) or one prepared twice (42P05): that connection is dropped. */
const PREPARED_STATE_LOST = new Set(['26000', '42P05']);

interface Prepared {
  name: string;
  /** `PREPARE name(types) AS …`, sent once per connection in front of its first use. */
  prepare: string;
}

function prepared(name: string, types: string, text: string): Prepared {
  return { name, prepare: `PREPARE ${name}(${types}) AS ${text.replace(/\s+/g, ' ').trim()}` };
}

/**
 * The inbox row and the sync record in one statement: the record is created or locked (and takes the
 * Booking if it is newer, KEEP_NEWEST_BOOKING) only when the inbox row is new. No row back: the message
 * was handled before (a redelivery), nothing changed.
 * $1 event id, $2 event type, $3 workspace, $4 Booking id, $5 host, $6 Booking, $7 its version, $8 event UID.
 */
const CLAIM = prepared(
  'calendar_sync_claim_message',
  'text, text, text, text, text, jsonb, integer, text',
  `WITH fresh AS (
     INSERT INTO calendar_sync.inbox (event_id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1
   )
   INSERT INTO calendar_sync.booking_syncs AS b (booking_id, workspace_id, host_id, booking, booking_version, status, event_uid)
   SELECT $4, $3, $5, $6, $7, 'pending', $8 FROM fresh
   ${KEEP_NEWEST_BOOKING}
   RETURNING ${SYNC_RECORD_COLUMNS}`,
);

const OUTBOX_CHANNEL = outboxChannel(outboxSchemaName(outbox));

/**
 * The write's outcome and its event, as booking-sync.queries.ts updateSyncRecord does with drizzle: the
 * outbox row and the relay's NOTIFY naming it (libs/messaging enqueueEventSql's row and payload) ride on
 * the update as a data-modifying WITH. It returns only the new `updated_at`: the rest of the record is the
 * claimed one (locked by the claim since) with the change applied, so the Booking is not sent back and
 * parsed again.
 * $1 Booking id, $2 workspace, $3 written version, $4 status, $5 error code, $6 object URL, $7 ETag,
 * $8 join URL, $9 event id, $10 event type, $11 event workspace, $12 event, $13 NOTIFY payload.
 */
const RECORD = prepared(
  'calendar_sync_record_result',
  'text, text, integer, text, text, text, text, text, text, text, text, jsonb, text',
  `WITH enqueued AS (
     INSERT INTO calendar_sync.outbox (id, type, workspace_id, payload)
     SELECT $9, $10, $11, $12 FROM (SELECT pg_notify('${OUTBOX_CHANNEL}', $13)) AS n
     RETURNING 1
   )
   UPDATE calendar_sync.booking_syncs b
      SET written_version = $3, status = $4, error_code = $5, object_url = $6, etag = $7, join_url = $8, updated_at = now()
    WHERE b.booking_id = $1 AND b.workspace_id = $2
   RETURNING b.updated_at`,
);

const STATEMENTS = [CLAIM, RECORD];

/** The statements prepared on each pooled connection (SQL PREPARE is per session). */
const preparedOn = new WeakMap<PoolClient, Set<string>>();

function preparesFor(client: PoolClient): string {
  let names = preparedOn.get(client);
  if (!names) preparedOn.set(client, (names = new Set()));
  const missing = STATEMENTS.filter((st) => !names.has(st.name));
  for (const st of missing) names.add(st.name);
  return missing.map((st) => `${st.prepare}; `).join('');
}

/** The result of every statement of a simple query (pg answers one result alone, several as an array). */
function results(res: QueryResult | QueryResult[]): QueryResult[] {
  return Array.isArray(res) ? res : [res];
}

/**
 * Runs the write of one booking.* message in one transaction on one pooled connection, in as few round
 * trips as the work allows: `BEGIN; EXECUTE claim(…)` (the inbox row and the locked sync record), the
 * provider call in `fn`, then `EXECUTE record(…); COMMIT` (the outcome, its outbox event, the commit).
 * Before, the message cost five (BEGIN, the inbox insert, the upsert, the update, COMMIT), each built by
 * drizzle and planned by Postgres. The two statements are prepared once per connection (SQL PREPARE,
 * sent in the same message as their first use); their values go as quoted literals
 * (pg's escapeLiteral), since several statements in one message cannot take bind parameters.
 *
 * `fn` gets the locked record (null: the inbox already had the message, a redelivery: nothing to do) and
 * a Store bound to the transaction. Its `updateSyncRecord` with an event is the transaction's last write:
 * it commits. Other writes (a connection's status, its host details) run as single statements in the
 * transaction before it, through drizzle on the same connection; after the commit the store refuses
 * every call. If `fn` returns without that write (the calendar already matched), the transaction commits
 * (the inbox row stays); if it throws, it rolls back: the inbox row goes too, so the message is retried.
 */
export async function inMessageTransaction<T>(
  pool: Pool,
  cache: StoreCache | undefined,
  message: BookingMessage,
  fn: (record: SyncRecord | null, store: Store) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let open = false;
  let committed = false;
  let broken: Error | undefined;
  const run = async (text: string): Promise<QueryResult[]> => {
    try {
      return results((await client.query(text)) as unknown as QueryResult | QueryResult[]);
    } catch (err) {
      // Not an answer of Postgres (the connection failed), or this connection's prepared statements are not what we think: drop it.
      if (!(err instanceof DatabaseError) || PREPARED_STATE_LOST.has(err.code ?? '')) broken = err instanceof Error ? err : new Error(String(err));
      throw err;
    }
  };
  const lit = (value: string | null): string => (value === null ? 'NULL' : client.escapeLiteral(value));
  const int = (value: number): string => {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${value}`);
    return String(value);
  };

  try {
    const { booking } = message;
    const claim = `EXECUTE ${CLAIM.name}(${[
      lit(message.eventId),
      lit(message.type),
      lit(message.workspaceId),
      lit(booking.id),
      lit(booking.host_id),
      lit(JSON.stringify(booking)),
      int(booking.version),
      lit(message.eventUid),
    ].join(', ')})`;
    const prepares = preparesFor(client);
    open = true;
    const claimed = (await run(`${prepares}BEGIN; ${claim}`)).at(-1)!;
    const record = claimed.rows.length === 0 ? null : ownRecord(claimed.rows[0] as SyncRow, message.workspaceId);

    const db = drizzle({ client }) as unknown as Db;
    // Every statement here belongs to this transaction: a nested one would commit it early.
    db.transaction = () => Promise.reject(new Error('no nested transaction in a booking.* message transaction'));
    const inner = createStore(db, cache, { inTransaction: true });
    const guard = <A extends unknown[], R>(f: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      if (committed) throw new Error('the booking.* message transaction has already committed');
      return f(...args);
    };
    const store: Store = {
      findConnection: guard(inner.findConnection),
      saveConnection: guard(inner.saveConnection),
      deleteConnection: guard(inner.deleteConnection),
      setConnectionStatus: guard(inner.setConnectionStatus),
      updateHostDetails: guard(inner.updateHostDetails),
      noteQueried: guard(inner.noteQueried),
      getSnapshot: guard(inner.getSnapshot),
      saveSnapshot: guard(inner.saveSnapshot),
      touchSnapshot: guard(inner.touchSnapshot),
      ownBookingIds: guard(inner.ownBookingIds),
      lockSyncRecord: guard(inner.lockSyncRecord),
      lockExistingSyncRecord: guard(inner.lockExistingSyncRecord),
      transaction: guard(inner.transaction),
      updateSyncRecord: guard(async (rec: SyncRecord, change: SyncRecordChange, event: OutboxEvent | null) => {
        if (!event) return inner.updateSyncRecord(rec, change, event);
        assertEnvelope(event);
        const [res] = await run(
          `EXECUTE ${RECORD.name}(${[
            lit(rec.bookingId),
            lit(rec.workspaceId),
            int(change.writtenVersion),
            lit(change.status),
            lit(change.errorCode),
            lit(change.objectUrl),
            lit(change.etag),
            lit(change.joinUrl),
            lit(event.id),
            lit(event.type),
            lit(event.workspace_id),
            lit(JSON.stringify(event)),
            lit(outboxNotifyPayload([event.id])),
          ].join(', ')}); COMMIT`,
        );
        committed = true;
        open = false;
        const row = res!.rows[0] as Pick<SyncRow, 'updated_at'> | undefined;
        if (!row) throw new Error('the locked sync record was not found at its update');
        return { ...rec, ...change, updatedAt: new Date(row.updated_at) };
      }),
    };

    const result = await fn(record, store);
    if (open) {
      await run('COMMIT');
      open = false;
    }
    return result;
  } catch (err) {
    if (open && !broken) await client.query('ROLLBACK').catch((e: unknown) => (broken = e instanceof Error ? e : new Error(String(e))));
    throw err;
  } finally {
    if (broken) preparedOn.delete(client);
    client.release(broken);
  }
}
