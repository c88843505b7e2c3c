import type { Db, DbTx } from '@sched/db';
import type { Store } from '../domain/ports';
import * as bookings from './booking-sync.queries';
import * as connections from './connection.queries';
import * as snapshots from './snapshot.queries';
import type { StoreCache } from './store-cache';

/**
 * The domain's storage port on the calendar_sync schema, bound to a pool or to one transaction. With
 * a cache, connections and snapshots are served from it when it has them, and this process's own
 * writes drop the copies they change (other replicas hear of them through NOTIFY).
 */
export function createStore(db: Db | DbTx, cache?: StoreCache, opts: { inTransaction?: boolean } = {}): Store {
  // Inside a transaction, a row this transaction changed reads back uncommitted: such reads are not kept.
  const changedHere = opts.inTransaction ? new Set<string>() : undefined;
  const dropping = async <T>(connectionId: string, write: Promise<T>): Promise<T> => {
    changedHere?.add(connectionId);
    try {
      return await write;
    } finally {
      cache?.invalidate(connectionId);
    }
  };
  const keeps = (connectionId: string) => !changedHere?.has(connectionId);
  return {
    findConnection: async (ws, host) => {
      if (!cache) return connections.findConnection(db, ws, host);
      const hit = cache.getConnection(ws, host);
      if (hit) return hit;
      const token = cache.token();
      const conn = await connections.findConnection(db, ws, host);
      if (conn && keeps(conn.id)) cache.putConnection(conn, token);
      return conn;
    },
    saveConnection: async (conn, event) => dropping(conn.id, connections.saveConnection(db, conn, event)),
    deleteConnection: async (ws, host, event) => {
      const cached = cache?.getConnection(ws, host);
      if (cached) changedHere?.add(cached.id);
      try {
        return await connections.deleteConnection(db, ws, host, event);
      } finally {
        if (cached) cache?.invalidate(cached.id);
      }
    },
    setConnectionStatus: (conn, status, code, event) => dropping(conn.id, connections.setConnectionStatus(db, conn, status, code, event)),
    updateHostDetails: (conn, details) => dropping(conn.id, connections.updateHostDetails(db, conn, details)),
    noteQueried: (conn) => connections.noteQueried(db, conn),
    getSnapshot: async (conn) => {
      if (!cache) return snapshots.getSnapshot(db, conn);
      const hit = cache.getSnapshot(conn);
      if (hit) return hit;
      const token = cache.token();
      const snap = await snapshots.getSnapshot(db, conn);
      if (snap && keeps(conn.id)) cache.putSnapshot(conn, snap, token);
      return snap;
    },
    saveSnapshot: (conn, snap) => dropping(conn.id, snapshots.saveSnapshot(db, conn, snap)),
    touchSnapshot: (conn, at) => dropping(conn.id, snapshots.touchSnapshot(db, conn, at)),
    ownBookingIds: async (ws, host, ids) => {
      if (!cache) return snapshots.ownBookingIds(db, ws, host, ids);
      const known = cache.knownOwnIds(ws, host, ids);
      if (known.length === ids.length) return new Set(known);
      const knownSet = new Set(known);
      const found = await snapshots.ownBookingIds(db, ws, host, ids.filter((id) => !knownSet.has(id)));
      cache.rememberOwnIds(ws, host, found);
      return new Set([...known, ...found]);
    },
    lockSyncRecord: (ws, booking, uid) => bookings.lockSyncRecord(db, ws, booking, uid),
    lockExistingSyncRecord: (ws, id) => bookings.lockExistingSyncRecord(db, ws, id),
    updateSyncRecord: (record, change, event) => bookings.updateSyncRecord(db, record, change, event),
    transaction: (fn) => db.transaction((tx) => fn(createStore(tx, cache, { inTransaction: true }))),
  };
}
