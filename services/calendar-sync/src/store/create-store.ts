import type { Db, DbTx } from '@sched/db';
import type { Store } from '../domain/ports';
import * as bookings from './booking-sync.queries';
import * as connections from './connection.queries';
import * as snapshots from './snapshot.queries';

/** The domain's storage port on the calendar_sync schema, bound to a pool or to one transaction. */
export function createStore(db: Db | DbTx): Store {
  return {
    findConnection: (ws, host) => connections.findConnection(db, ws, host),
    saveConnection: (conn, event) => connections.saveConnection(db, conn, event),
    deleteConnection: (ws, host, event) => connections.deleteConnection(db, ws, host, event),
    setConnectionStatus: (conn, status, code, event) => connections.setConnectionStatus(db, conn, status, code, event),
    updateHostDetails: (conn, details) => connections.updateHostDetails(db, conn, details),
    noteQueried: (conn) => connections.noteQueried(db, conn),
    getSnapshot: (conn) => snapshots.getSnapshot(db, conn),
    saveSnapshot: (conn, snap) => snapshots.saveSnapshot(db, conn, snap),
    touchSnapshot: (conn, at) => snapshots.touchSnapshot(db, conn, at),
    ownBookingIds: (ws, host, ids) => snapshots.ownBookingIds(db, ws, host, ids),
    lockSyncRecord: (ws, booking, uid) => bookings.lockSyncRecord(db, ws, booking, uid),
    lockExistingSyncRecord: (ws, id) => bookings.lockExistingSyncRecord(db, ws, id),
    updateSyncRecord: (record, change, event) => bookings.updateSyncRecord(db, record, change, event),
    transaction: (fn) => db.transaction((tx) => fn(createStore(tx))),
  };
}
