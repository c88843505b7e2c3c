import { makeEvent, newId } from '@sched/contracts';
import { createDb, createPool } from '@sched/db';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import type { Pool } from 'pg';
import { claimDueConnections, findConnection, releaseLease } from '../../src/store/connection.queries';
import { createStore } from '../../src/store/create-store';
import { getSnapshot, saveSnapshot } from '../../src/store/snapshot.queries';
import { StoreCache } from '../../src/store/store-cache';

let db: TestDatabase;
const pools: Pool[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ services: ['calendar-sync'] });
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db.drop();
});

async function insertConnection(opts: { lastQueriedMinutesAgo: number; snapshotMinutesAgo: number | null }): Promise<string> {
  const id = newId('cal');
  const ws = newId('wsp');
  await db.adminPool.query(
    `INSERT INTO calendar_sync.calendar_connections (id, workspace_id, host_id, provider, url, username, password_sealed, calendar_url, host_timezone, last_queried_at)
     VALUES ($1, $2, $3, 'caldav', 'http://x', 'u', 'v1.k1.x.y.z', 'http://x/c/', 'UTC', now() - make_interval(mins => $4))`,
    [id, ws, newId('hst'), opts.lastQueriedMinutesAgo],
  );
  if (opts.snapshotMinutesAgo !== null) {
    await db.adminPool.query(
      `INSERT INTO calendar_sync.busy_snapshots (connection_id, workspace_id, range_from, range_to, fetched_at, items)
       VALUES ($1, $2, now(), now() + interval '1 day', now() - make_interval(mins => $3), '[]')`,
      [id, ws, opts.snapshotMinutesAgo],
    );
  }
  return id;
}

const params = { activeWindowMs: 3_600_000, staleAfterMs: 60_000, leaseMs: 30_000, limit: 3 };

describe('claimDueConnections (busy refresher)', () => {
  it('claims only active hosts with a missing or stale snapshot, and concurrent replicas never claim one host twice', async () => {
    const due = await Promise.all(Array.from({ length: 8 }, (_, i) => insertConnection({ lastQueriedMinutesAgo: 1, snapshotMinutesAgo: i % 2 === 0 ? 5 : null })));
    const fresh = await insertConnection({ lastQueriedMinutesAgo: 1, snapshotMinutesAgo: 0 });
    const idle = await insertConnection({ lastQueriedMinutesAgo: 120, snapshotMinutesAgo: 30 });

    const replicas = Array.from({ length: 4 }, () => {
      const pool = createPool(db.urlFor('calendar-sync'), { max: 2, logger: { error: () => undefined } });
      pools.push(pool);
      return createDb(pool);
    });
    const claims = await Promise.all(replicas.map((r) => claimDueConnections(r, params)));
    const ids = claims.flat().map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length); // disjoint
    expect(ids.sort()).toEqual([...due].sort()); // 4 × limit 3 ≥ 8: every due host once, nothing else
    expect(ids).not.toContain(fresh);
    expect(ids).not.toContain(idle);

    // Leased: claimed again by nobody until released.
    expect(await claimDueConnections(replicas[0]!, params)).toEqual([]);
    const released = claims.flat()[0]!;
    await releaseLease(replicas[0]!, released);
    expect((await claimDueConnections(replicas[1]!, params)).map((c) => c.id)).toEqual([released.id]);
  });
});

describe('saveSnapshot', () => {
  it('does not keep a read made with a connection that was replaced meanwhile, nor one older than the snapshot kept', async () => {
    const id = await insertConnection({ lastQueriedMinutesAgo: 1, snapshotMinutesAgo: null });
    const row = await db.adminPool.query('SELECT workspace_id, host_id FROM calendar_sync.calendar_connections WHERE id = $1', [id]);
    const q = createDb(db.pool('calendar-sync'));
    const conn = (await findConnection(q, row.rows[0].workspace_id, row.rows[0].host_id))!;
    const snap = (fetchedAt: Date, uid: string) => ({
      connectionId: id,
      range: { start: new Date('2026-11-21T00:00:00Z'), end: new Date('2027-02-21T00:00:00Z') },
      fetchedAt,
      changeMarker: 'ctag:1',
      items: [{ uid, kind: 'instant' as const, start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T11:00:00.000Z' }],
    });

    // The admin replaced the password while a refresh with the old one was running.
    await db.adminPool.query(`UPDATE calendar_sync.calendar_connections SET password_sealed = 'v1.k1.new.new.new' WHERE id = $1`, [id]);
    await saveSnapshot(q, conn, snap(new Date(), 'old'));
    expect(await getSnapshot(q, conn)).toBeNull();

    const current = (await findConnection(q, conn.workspaceId, conn.hostId))!;
    await saveSnapshot(q, current, snap(new Date('2026-11-22T10:00:00Z'), 'newer'));
    await saveSnapshot(q, current, snap(new Date('2026-11-22T09:00:00Z'), 'older'));
    expect((await getSnapshot(q, current))?.items.map((i) => i.uid)).toEqual(['newer']);
  });
});

describe('createStore with a cache', () => {
  it('never keeps a row read back inside the transaction that changed it (it may roll back)', async () => {
    const id = await insertConnection({ lastQueriedMinutesAgo: 1, snapshotMinutesAgo: null });
    const row = (await db.adminPool.query('SELECT workspace_id, host_id FROM calendar_sync.calendar_connections WHERE id = $1', [id])).rows[0];
    const pool = createPool(db.urlFor('calendar-sync'), { max: 2, logger: { error: () => undefined } });
    pools.push(pool);
    const cache = new StoreCache();
    cache.enable();
    const store = createStore(createDb(pool), cache);
    const conn = (await store.findConnection(row.workspace_id, row.host_id))!;
    expect(cache.getConnection(row.workspace_id, row.host_id)).toBe(conn);

    const event = makeEvent('calendar.connection_updated', { workspaceId: row.workspace_id, data: { host_id: row.host_id, status: 'error', error_code: 'auth_failed' } });
    await expect(
      store.transaction(async (tx) => {
        expect(await tx.setConnectionStatus(conn, 'error', 'auth_failed', event)).toBe(true);
        expect((await tx.findConnection(row.workspace_id, row.host_id))?.status).toBe('error'); // its own, uncommitted change
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(cache.getConnection(row.workspace_id, row.host_id)).toBeUndefined();
    expect((await store.findConnection(row.workspace_id, row.host_id))?.status).toBe('connected');
  });
});
