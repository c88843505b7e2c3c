import type { Connection, Snapshot } from '../domain/ports';

export interface StoreCacheOptions {
  /** Most connections (and snapshots) kept; the oldest entry goes first. */
  maxEntries?: number;
  /** Most Booking ids remembered as this service's own, over all hosts; past it the memory starts over. */
  maxOwnIds?: number;
}

/**
 * In-process copies of connection rows and busy snapshots, so a busy query or a calendar write does
 * not read (and parse) them from Postgres every time. Kept correct by invalidation: this process drops
 * an entry after its own writes, and every replica drops it when the database announces a change
 * (NOTIFY on commit, store/cache-invalidation.ts). It serves only while that LISTEN is in place
 * (`enable`/`disable`): changes made while nobody listened went unheard.
 *
 * A read that was in flight while an invalidation arrived is not kept: it may have seen the row from
 * before the change.
 *
 * Booking ids known to be this service's own for a host are remembered separately: a sync record is
 * never deleted and never changes host, so that fact stays true and needs no invalidation.
 */
export class StoreCache {
  private enabled = false;
  /** Bumped by every invalidation: a read started before it must not be stored. */
  private generation = 0;
  private readonly connections = new Map<string, Connection>();
  /** Connection id → key of `connections`. */
  private readonly keyOfId = new Map<string, string>();
  private readonly snapshots = new Map<string, Snapshot & { workspaceId: string }>();
  private readonly ownIds = new Map<string, Set<string>>();
  private ownIdCount = 0;
  private readonly maxEntries: number;
  private readonly maxOwnIds: number;

  constructor(opts: StoreCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 5_000;
    this.maxOwnIds = opts.maxOwnIds ?? 200_000;
  }

  isEnabled(): boolean {
    return this.enabled;
  }

  /** LISTEN is in place: start (empty) serving. */
  enable(): void {
    this.invalidateAll();
    this.enabled = true;
  }

  /** LISTEN was lost: serve nothing until it is back. */
  disable(): void {
    this.enabled = false;
    this.invalidateAll();
  }

  /** A read starts: pass the token to the matching `put…`. */
  token(): number {
    return this.generation;
  }

  getConnection(workspaceId: string, hostId: string): Connection | undefined {
    return this.enabled ? this.connections.get(connectionKey(workspaceId, hostId)) : undefined;
  }

  putConnection(conn: Connection, token: number): void {
    if (!this.enabled || token !== this.generation) return;
    const key = connectionKey(conn.workspaceId, conn.hostId);
    if (this.connections.size >= this.maxEntries && !this.connections.has(key)) {
      const oldest = this.connections.entries().next();
      if (!oldest.done) {
        this.connections.delete(oldest.value[0]);
        this.keyOfId.delete(oldest.value[1].id);
      }
    }
    this.connections.set(key, conn);
    this.keyOfId.set(conn.id, key);
  }

  getSnapshot(conn: Pick<Connection, 'id' | 'workspaceId'>): Snapshot | undefined {
    if (!this.enabled) return undefined;
    const s = this.snapshots.get(conn.id);
    return s && s.workspaceId === conn.workspaceId ? s : undefined;
  }

  putSnapshot(conn: Pick<Connection, 'workspaceId'>, snapshot: Snapshot, token: number): void {
    if (!this.enabled || token !== this.generation) return;
    if (this.snapshots.size >= this.maxEntries && !this.snapshots.has(snapshot.connectionId)) {
      const oldest = this.snapshots.keys().next();
      if (!oldest.done) this.snapshots.delete(oldest.value);
    }
    this.snapshots.set(snapshot.connectionId, { ...snapshot, workspaceId: conn.workspaceId });
  }

  /** The connection (and its snapshot) changed: drop both. */
  invalidate(connectionId: string): void {
    this.generation++;
    const key = this.keyOfId.get(connectionId);
    if (key !== undefined) {
      this.keyOfId.delete(connectionId);
      this.connections.delete(key);
    }
    this.snapshots.delete(connectionId);
  }

  invalidateAll(): void {
    this.generation++;
    this.connections.clear();
    this.keyOfId.clear();
    this.snapshots.clear();
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
