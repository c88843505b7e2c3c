import { NotifiedCache, type KeptInStep } from '@sched/db';
import type { Connection, Snapshot } from '../domain/ports';

export interface StoreCacheOptions {
  /** Most connections (and snapshots) kept; the least recently used go first. */
  maxEntries?: number;
  /** Most Booking ids remembered as this service's own, over all hosts; past it the memory starts over. */
  maxOwnIds?: number;
}

/**
 * In-process copies of connection rows and busy snapshots, so a busy query or a calendar write does
 * not read (and parse) them from Postgres every time. Kept correct by invalidation, per connection id:
 * this process drops a connection's copies after its own writes, and every replica drops them when the
 * database announces a change (NOTIFY on commit, store/cache-invalidation.ts). The rules of staying in
 * step are libs/db's NotifiedCache: serve only while that LISTEN is in place (`enable`/`disable`),
 * never keep a read of a connection that was in flight while that connection was invalidated (it may
 * have seen the row from before the change), cap the number of entries.
 *
 * Booking ids known to be this service's own for a host are remembered separately: a sync record is
 * never deleted and never changes host, so that fact stays true and needs no invalidation.
 */
export class StoreCache implements KeptInStep {
  /** By workspace and host; grouped by connection id, the id the database announces. */
  private readonly connections: NotifiedCache<string, Connection>;
  /** By connection id. */
  private readonly snapshots: NotifiedCache<string, Snapshot & { workspaceId: string }>;
  private readonly ownIds = new Map<string, Set<string>>();
  private ownIdCount = 0;
  private readonly maxOwnIds: number;

  constructor(opts: StoreCacheOptions = {}) {
    const maxEntries = opts.maxEntries ?? 5_000;
    this.connections = new NotifiedCache({ maxWeight: maxEntries });
    this.snapshots = new NotifiedCache({ maxWeight: maxEntries });
    this.maxOwnIds = opts.maxOwnIds ?? 200_000;
  }

  isEnabled(): boolean {
    return this.connections.isEnabled();
  }

  /** LISTEN is in place: start (empty) serving. */
  enable(): void {
    this.connections.enable();
    this.snapshots.enable();
  }

  /** LISTEN was lost: serve nothing until it is back. */
  disable(): void {
    this.connections.disable();
    this.snapshots.disable();
  }

  /** A read starts: pass the token to the matching `put…` (one token serves both kinds of copy). */
  token(): number {
    return this.connections.stamp();
  }

  getConnection(workspaceId: string, hostId: string): Connection | undefined {
    return this.connections.get(connectionKey(workspaceId, hostId));
  }

  putConnection(conn: Connection, token: number): void {
    this.connections.put(connectionKey(conn.workspaceId, conn.hostId), conn, conn.id, token);
  }

  getSnapshot(conn: Pick<Connection, 'id' | 'workspaceId'>): Snapshot | undefined {
    const s = this.snapshots.get(conn.id);
    return s && s.workspaceId === conn.workspaceId ? s : undefined;
  }

  putSnapshot(conn: Pick<Connection, 'workspaceId'>, snapshot: Snapshot, token: number): void {
    this.snapshots.put(snapshot.connectionId, { ...snapshot, workspaceId: conn.workspaceId }, snapshot.connectionId, token);
  }

  /** The connection (and its snapshot) changed: drop both. */
  invalidate(connectionId: string): void {
    this.connections.invalidate(connectionId);
    this.snapshots.invalidate(connectionId);
  }

  invalidateAll(): void {
    this.connections.invalidateAll();
    this.snapshots.invalidateAll();
  }

  /** Of these ids, those known to be the host's own Bookings. */
  knownOwnIds(workspaceId: string, hostId: string, ids: readonly string[]): string[] {
    const known = this.ownIds.get(connectionKey(workspaceId, hostId));
    return known ? ids.filter((id) => known.has(id)) : [];
  }

  rememberOwnIds(workspaceId: string, hostId: string, ids: Iterable<string>): void {
    const key = connectionKey(workspaceId, hostId);
    let known = this.ownIds.get(key);
    for (const id of ids) {
      if (this.ownIdCount >= this.maxOwnIds) {
        this.ownIds.clear();
        this.ownIdCount = 0;
        known = undefined;
      }
      if (!known) {
        known = new Set();
        this.ownIds.set(key, known);
      }
      if (!known.has(id)) {
        known.add(id);
        this.ownIdCount++;
      }
    }
  }
}

function connectionKey(workspaceId: string, hostId: string): string {
  return `${workspaceId}/${hostId}`;
}
