import { makeEvent, newId, type Booking } from '@sched/contracts';
import { createDb, createPool } from '@sched/db';
import { createTestDatabase, makeBooking, waitFor, type TestDatabase } from '@sched/testing';
import { Client, type Pool } from 'pg';
import { bookingEventUid } from '../../src/domain/booking-event';
import { connectionUpdatedEvent } from '../../src/domain/connection-status';
import type { Connection, OutboxEvent, SyncRecord } from '../../src/domain/ports';
import { setConnectionStatus } from '../../src/store/connection.queries';
import { inMessageTransaction, type BookingMessage } from '../../src/store/message-transaction';

let db: TestDatabase;
const pools: Pool[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ services: ['calendar-sync'] });
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

function servicePool(max = 4): Pool {
  const pool = createPool(db.urlFor('calendar-sync'), { max, logger: { error: () => undefined } });
  pools.push(pool);
  return pool;
}

function message(booking: Booking, workspaceId = 'wsp_a', eventId = newId('wev')): BookingMessage {
  return { eventId, type: booking.version === 1 ? 'booking.created' : 'booking.rescheduled', workspaceId, booking, eventUid: bookingEventUid(booking.id) };
}

function syncedEvent(record: SyncRecord): OutboxEvent {
  return makeEvent('calendar.synced', {
    workspaceId: record.workspaceId,
    data: { booking_id: record.bookingId, booking_version: record.booking.version, status: 'synced', join_url: null, event_uid: record.eventUid },
  });
}

/** What a successful write records, as the domain does. */
const written = (record: SyncRecord) => ({ writtenVersion: record.booking.version, status: 'synced' as const, errorCode: null, objectUrl: `http://cal/${record.bookingId}.ics`, etag: '"e1"', joinUrl: null });

const inboxRows = async (eventId: string) => (await db.adminPool.query('SELECT type FROM calendar_sync.inbox WHERE event_id = $1', [eventId])).rows;
const syncRow = async (bookingId: string) => (await db.adminPool.query('SELECT * FROM calendar_sync.booking_syncs WHERE booking_id = $1', [bookingId])).rows[0];
const outboxRow = async (id: string) => (await db.adminPool.query('SELECT id, type, workspace_id, payload, published_at FROM calendar_sync.outbox WHERE id = $1', [id])).rows[0];

describe('inMessageTransaction (the booking.* write path)', () => {
  it('claims the inbox row and the sync record, commits the outcome with its outbox event and NOTIFY, and a redelivery finds the inbox row', async () => {
    const pool = servicePool();
    const listener = new Client({ connectionString: db.adminUrl });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => notified.push(n.payload ?? ''));
    await listener.query('LISTEN calendar_sync_outbox');
    try {
      const booking = makeBooking({ host_id: newId('hst') });
      const msg = message(booking);
      let event: OutboxEvent | undefined;
      const record = await inMessageTransaction(pool, undefined, msg, async (locked, store) => {
        expect(locked).toMatchObject({ bookingId: booking.id, workspaceId: 'wsp_a', hostId: booking.host_id, bookingVersion: 1, writtenVersion: 0, status: 'pending', eventUid: msg.eventUid });
        expect(locked!.booking).toEqual(booking);
        event = syncedEvent(locked!);
        return store.updateSyncRecord(locked!, written(locked!), event);
      });
      expect(record).toMatchObject({ writtenVersion: 1, status: 'synced', objectUrl: `http://cal/${booking.id}.ics`, etag: '"e1"' });
      // The record returned is the row as committed, every field (the statement returns only updated_at).
      const stored = await syncRow(booking.id);
      expect(record).toEqual({
        bookingId: stored.booking_id,
        workspaceId: stored.workspace_id,
        hostId: stored.host_id,
        booking: stored.booking,
        bookingVersion: stored.booking_version,
        writtenVersion: stored.written_version,
        status: stored.status,
        errorCode: stored.error_code,
        eventUid: stored.event_uid,
        objectUrl: stored.object_url,
        etag: stored.etag,
        joinUrl: stored.join_url,
        updatedAt: stored.updated_at,
      });
      expect(await inboxRows(msg.eventId)).toEqual([{ type: 'booking.created' }]);
      expect(await syncRow(booking.id)).toMatchObject({ written_version: 1, booking_version: 1, status: 'synced', etag: '"e1"' });
      // The same row and payload libs/messaging's enqueueEvent writes, and the NOTIFY naming it.
      expect(await outboxRow(event!.id)).toEqual({ id: event!.id, type: 'calendar.synced', workspace_id: 'wsp_a', payload: JSON.parse(JSON.stringify(event)), published_at: null });
      await waitFor(() => notified.includes(JSON.stringify([event!.id])));

      // The same message again: the inbox has it, so nothing is locked, changed or written.
      const again = await inMessageTransaction(pool, undefined, msg, async (locked) => locked);
      expect(again).toBeNull();
      expect(await syncRow(booking.id)).toMatchObject({ written_version: 1, status: 'synced' });
    } finally {
      await listener.end();
    }
  });

  it('keeps the newest Booking state: an older message locks the record without changing it, a newer one makes it pending again', async () => {
    const pool = servicePool();
    const v1 = makeBooking({ host_id: newId('hst') });
    const v2 = { ...v1, version: 2, start_at: '2026-11-23T09:30:00.000Z', end_at: '2026-11-23T10:00:00.000Z' };
    await inMessageTransaction(pool, undefined, message(v2), async (locked, store) => store.updateSyncRecord(locked!, written(locked!), syncedEvent(locked!)));
    const late = await inMessageTransaction(pool, undefined, message(v1), async (locked) => locked);
    expect(late).toMatchObject({ bookingVersion: 2, writtenVersion: 2, status: 'synced' });
    expect(late!.booking).toEqual(v2);
    const v3 = { ...v2, version: 3, status: 'cancelled' as const };
    const newer = await inMessageTransaction(pool, undefined, message(v3), async (locked) => locked);
    expect(newer).toMatchObject({ bookingVersion: 3, writtenVersion: 2, status: 'pending', errorCode: null });
  });

  it('rolls back when the write fails: no inbox row and no new record state, so the retried message is handled again', async () => {
    const pool = servicePool();
    const booking = makeBooking({ host_id: newId('hst') });
    const msg = message(booking);
    await expect(inMessageTransaction(pool, undefined, msg, async () => Promise.reject(new Error('provider unavailable')))).rejects.toThrow('provider unavailable');
    expect(await inboxRows(msg.eventId)).toEqual([]);
    expect(await syncRow(booking.id)).toBeUndefined();
    const retried = await inMessageTransaction(pool, undefined, msg, async (locked) => locked);
    expect(retried).toMatchObject({ bookingId: booking.id, status: 'pending' });
  });

  it('commits the inbox row when the calendar already matched (nothing written)', async () => {
    const pool = servicePool();
    const booking = makeBooking({ host_id: newId('hst') });
    await inMessageTransaction(pool, undefined, message(booking), async (locked, store) => store.updateSyncRecord(locked!, written(locked!), syncedEvent(locked!)));
    const duplicateChange = message(booking); // the same change published again under a new id
    const outcome = await inMessageTransaction(pool, undefined, duplicateChange, async (locked) => locked!.writtenVersion >= locked!.booking.version);
    expect(outcome).toBe(true);
    expect(await inboxRows(duplicateChange.eventId)).toHaveLength(1);
  });

  it('refuses a Booking id recorded for another workspace, and keeps nothing of the message', async () => {
    const pool = servicePool();
    const booking = makeBooking({ host_id: newId('hst') });
    await inMessageTransaction(pool, undefined, message(booking, 'wsp_a'), async (locked) => locked);
    const foreign = message({ ...booking, version: 2 }, 'wsp_b');
    const fn = jest.fn();
    await expect(inMessageTransaction(pool, undefined, foreign, fn)).rejects.toThrow('belongs to another workspace');
    expect(fn).not.toHaveBeenCalled();
    expect(await inboxRows(foreign.eventId)).toEqual([]);
    expect(await syncRow(booking.id)).toMatchObject({ workspace_id: 'wsp_a', booking_version: 1 });
  });

  it('after its commit the store refuses every call, and it never opens a nested transaction', async () => {
    const pool = servicePool();
    const booking = makeBooking({ host_id: newId('hst') });
    await expect(
      inMessageTransaction(pool, undefined, message(booking), async (_locked, store) => store.transaction(async () => 'nested')),
    ).rejects.toThrow('no nested transaction');
    expect(await syncRow(booking.id)).toBeUndefined(); // rolled back

    const late = jest.fn();
    await expect(
      inMessageTransaction(pool, undefined, message(booking), async (locked, store) => {
        await store.updateSyncRecord(locked!, written(locked!), syncedEvent(locked!));
        await store.findConnection('wsp_a', booking.host_id).then(late);
      }),
    ).rejects.toThrow('already committed');
    expect(late).not.toHaveBeenCalled();
    expect(await syncRow(booking.id)).toMatchObject({ written_version: 1, status: 'synced' }); // what was committed stays
  });

  it('runs single statements of the store (a connection status) inside the transaction, undone with it', async () => {
    const pool = servicePool();
    const conn = await insertConnection();
    const booking = makeBooking({ host_id: conn.hostId });
    await expect(
      inMessageTransaction(pool, undefined, message(booking, conn.workspaceId), async (_locked, store) => {
        expect(await store.setConnectionStatus(conn, 'error', 'auth_failed', connectionUpdatedEvent(conn, 'error', 'auth_failed'))).toBe(true);
        throw new Error('later failure');
      }),
    ).rejects.toThrow('later failure');
    expect((await db.adminPool.query('SELECT status FROM calendar_sync.calendar_connections WHERE id = $1', [conn.id])).rows[0].status).toBe('connected');
    expect((await db.adminPool.query(`SELECT count(*)::int AS n FROM calendar_sync.outbox WHERE type = 'calendar.connection_updated' AND payload->'data'->>'host_id' = $1`, [conn.hostId])).rows[0].n).toBe(0);
  });

  it('drops a connection whose prepared statements are gone (an error, the message retried) and prepares them again on the next', async () => {
    const pool = servicePool(1); // one connection: the message path and DEALLOCATE share it
    const first = makeBooking({ host_id: newId('hst') });
    await inMessageTransaction(pool, undefined, message(first), async (locked) => locked);
    const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await pool.query('DEALLOCATE ALL');
    const second = message(makeBooking({ host_id: newId('hst') }));
    await expect(inMessageTransaction(pool, undefined, second, async (locked) => locked)).rejects.toMatchObject({ code: '26000' });
    expect(await inboxRows(second.eventId)).toEqual([]);
    const retried = await inMessageTransaction(pool, undefined, second, async (locked) => locked);
    expect(retried).toMatchObject({ bookingId: second.booking.id });
    expect((await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid).not.toBe(backend);
  });

  it('plans its two statements generically once they have run a few times on a connection (no planning per message)', async () => {
    const pool = servicePool(1); // one connection: every message on it, and the view of its prepared statements
    for (let i = 0; i < 12; i++) {
      const booking = makeBooking({ host_id: newId('hst') });
      await inMessageTransaction(pool, undefined, message(booking), async (locked, store) => store.updateSyncRecord(locked!, written(locked!), syncedEvent(locked!)));
    }
    const { rows } = await pool.query<{ name: string; generic_plans: string; custom_plans: string }>(
      `SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'calendar_sync_%' ORDER BY name`,
    );
    expect(rows.map((r) => r.name)).toEqual(['calendar_sync_claim_message', 'calendar_sync_record_result']);
    for (const r of rows) {
      // Postgres tries custom plans for the first five executions, then keeps the generic one.
      expect(Number(r.custom_plans)).toBeLessThanOrEqual(5);
      expect(Number(r.generic_plans)).toBeGreaterThanOrEqual(7);
    }
  });

  it('holds the sync record locked until it commits: a message for the same Booking waits, then sees the written version', async () => {
    const pool = servicePool();
    const v1 = makeBooking({ host_id: newId('hst') });
    const v2 = { ...v1, version: 2, start_at: '2026-11-23T09:30:00.000Z', end_at: '2026-11-23T10:00:00.000Z' };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const firstClaimed = new Promise<void>((r) => (claimed = r));
    const first = inMessageTransaction(pool, undefined, message(v1), async (locked, store) => {
      claimed();
      await held; // the provider call
      return store.updateSyncRecord(locked!, written(locked!), syncedEvent(locked!));
    });
    await firstClaimed;
    const seen = jest.fn();
    const second = inMessageTransaction(pool, undefined, message(v2), async (locked) => {
      seen(locked);
      return locked;
    });
    // The second claim waits on the row lock of the first transaction.
    await waitFor(async () => (await db.adminPool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, [db.name])).rowCount === 1);
    expect(seen).not.toHaveBeenCalled();
    release();
    await first;
    expect(await second).toMatchObject({ bookingVersion: 2, writtenVersion: 1, status: 'pending' });
  });
});

describe('setConnectionStatus (one statement)', () => {
  it('changes the status and enqueues the event (and its NOTIFY) only when it differs, and leaves a replaced connection alone', async () => {
    const q = createDb(db.pool('calendar-sync'));
    const conn = await insertConnection();
    const listener = new Client({ connectionString: db.adminUrl });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => notified.push(n.payload ?? ''));
    await listener.query('LISTEN calendar_sync_outbox');
    try {
      const events = async () => (await db.adminPool.query(`SELECT payload FROM calendar_sync.outbox WHERE payload->'data'->>'host_id' = $1 ORDER BY created_at`, [conn.hostId])).rows.map((r) => r.payload.data);
      const first = connectionUpdatedEvent(conn, 'error', 'auth_failed');
      const same = connectionUpdatedEvent(conn, 'error', 'auth_failed');
      expect(await setConnectionStatus(q, conn, 'error', 'auth_failed', first)).toBe(true);
      expect(await setConnectionStatus(q, conn, 'error', 'auth_failed', same)).toBe(false);
      expect(await events()).toEqual([{ host_id: conn.hostId, status: 'error', error_code: 'auth_failed' }]);
      await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET password_sealed = 'v1.k1.new.new.new' WHERE id = $1`, [conn.id]);
      const replaced = connectionUpdatedEvent(conn, 'connected', null);
      expect(await setConnectionStatus(q, conn, 'connected', null, replaced)).toBe(false);
      expect(await events()).toHaveLength(1);
      expect((await db.adminPool.query('SELECT status, error_code FROM calendar_sync.calendar_connections WHERE id = $1', [conn.id])).rows[0]).toEqual({ status: 'error', error_code: 'auth_failed' });
      // Notifications arrive in commit order: once a later one is in, none came for the calls that changed nothing.
      const current = { ...conn, passwordSealed: 'v1.k1.new.new.new' };
      const last = connectionUpdatedEvent(current, 'connected', null);
      expect(await setConnectionStatus(q, current, 'connected', null, last)).toBe(true);
      await waitFor(() => notified.includes(JSON.stringify([last.id])));
      expect(notified).toEqual([JSON.stringify([first.id]), JSON.stringify([last.id])]);
    } finally {
      await listener.end();
    }
  });
});

async function insertConnection(): Promise<Connection> {
  const conn = { id: newId('cal'), workspaceId: newId('wsp'), hostId: newId('hst') };
  await db.adminPool.query(
    `INSERT INTO calendar_sync.calendar_connections (id, workspace_id, host_id, provider, url, username, password_sealed, calendar_url, host_timezone)
     VALUES ($1, $2, $3, 'caldav', 'http://x', 'u', 'v1.k1.x.y.z', 'http://x/c/', 'UTC')`,
    [conn.id, conn.workspaceId, conn.hostId],
  );
  const row = (await db.adminPool.query('SELECT * FROM calendar_sync.calendar_connections WHERE id = $1', [conn.id])).rows[0];
  return {
    ...conn,
    provider: 'caldav',
    url: row.url,
    username: row.username,
    passwordSealed: row.password_sealed,
    calendarUrl: row.calendar_url,
    hostTimezone: row.host_timezone,
    conferencingUrlTemplate: null,
    status: 'connected',
    errorCode: null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
