/**
 * Answers of the Slots query, kept in memory until anything they were computed from may have changed.
 *
 * Every input but calendar busy time lives in this service's own tables (Event Type, host schedule
 * and timezone, the booked-interval and calendar-state projections); each change to them is announced
 * per host (a Postgres NOTIFY on commit, heard by every replica) and drops that host's answers. Calendar
 * busy time comes from calendar-sync, which keeps its own snapshot fresh, so an answer also expires
 * `ttlMs` after it was computed: the extra staleness that busy time can have. Time itself changes an
 * answer when its first slot falls inside the minimum notice, so an answer never outlives that moment.
 *
 * The cache only serves while notifications are heard: the owner disables it when the LISTEN
 * connection breaks and enables it again (empty) once it is back.
 */
export interface SlotsCacheOptions {
  /** Longest life of an answer. */
  ttlMs: number;
  /** Bound on the summed size of the answers held (their JSON length). */
  maxBytes: number;
}

interface Entry {
  json: string;
  hostId: string;
  stamp: number;
  expiresAt: number;
}

/** Taken before an answer's inputs are read; an invalidation after it makes the answer unstorable. */
export interface SlotsCacheTicket {
  readonly key: string;
  readonly stamp: number;
  /** When the inputs started to be read: the answer's age counts from here. */
  readonly at: number;
}

/** Keyed by everything an answer depends on besides the inputs the invalidations cover. */
export function slotsCacheKey(workspaceId: string, eventTypeId: string, from: string, to: string, timezone: string): string {
  return `${workspaceId}\u0000${eventTypeId}\u0000${from}\u0000${to}\u0000${timezone}`;
}

export class SlotsCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Increases with every invalidation; an entry is valid only if nothing touching it came after its stamp. */
  private counter = 0;
  private allInvalidatedAt = 0;
  /** Host id → [counter value, wall-clock ms] of its last invalidation. */
  private readonly hostInvalidatedAt = new Map<string, [number, number]>();
  private enabled = false;

  constructor(private readonly opts: SlotsCacheOptions) {}

  get size(): number {
    return this.entries.size;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  isEnabled(): boolean {
    return this.enabled && this.opts.ttlMs > 0 && this.opts.maxBytes > 0;
  }

  /** Serving starts (again): whatever was held may have changed unheard, so it is all dropped. */
  enable(): void {
    this.invalidateAll();
    this.enabled = true;
  }

  disable(): void {
    this.enabled = false;
    this.invalidateAll();
  }

  /** The JSON of a valid answer, or undefined. */
  get(key: string, now: number): string | undefined {
    if (!this.isEnabled()) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now >= entry.expiresAt || !this.stillValid(entry)) {
      this.remove(key, entry);
      return undefined;
    }
    // Most recently used last: eviction takes from the front.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.json;
  }

  /** Call before reading the inputs of an answer for `key`. */
  ticket(key: string, now: number): SlotsCacheTicket {
    return { key, stamp: this.counter, at: now };
  }

  /**
   * Stores an answer computed after `ticket` was taken, unless an invalidation for its host (or all)
   * came in meanwhile or it is already expired. Its life counts from the ticket, so an answer that
   * took longer than the TTL to compute is never stored.
   */
  put(ticket: SlotsCacheTicket, hostId: string, json: string, expiresAt: number, now: number): boolean {
    if (!this.isEnabled()) return false;
    const entry: Entry = { json, hostId, stamp: ticket.stamp, expiresAt: Math.min(expiresAt, ticket.at + this.opts.ttlMs) };
    if (entry.expiresAt <= now || !this.stillValid(entry) || json.length > this.opts.maxBytes) return false;
    const old = this.entries.get(ticket.key);
    if (old) this.remove(ticket.key, old);
    this.entries.set(ticket.key, entry);
    this.bytes += json.length;
    for (const [key, e] of this.entries) {
      if (this.bytes <= this.opts.maxBytes) break;
      this.remove(key, e);
    }
    this.prune(now);
    return true;
  }

  /** Something the answers of `hostId` depend on changed. */
  invalidateHost(hostId: string, now: number): void {
    this.hostInvalidatedAt.set(hostId, [++this.counter, now]);
  }

  invalidateAll(): void {
    this.allInvalidatedAt = ++this.counter;
    this.entries.clear();
    this.hostInvalidatedAt.clear();
    this.bytes = 0;
  }

  private stillValid(entry: Entry): boolean {
    if (this.allInvalidatedAt > entry.stamp) return false;
    const host = this.hostInvalidatedAt.get(entry.hostId);
    return host === undefined || host[0] <= entry.stamp;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.json.length;
  }

  /**
   * Forgets host invalidations older than the longest life of an answer: every answer (and every
   * ticket) from before them has expired, so they can no longer decide anything.
   */
  private prune(now: number): void {
    if (this.hostInvalidatedAt.size < 1024) return;
    for (const [host, [, at]] of this.hostInvalidatedAt) {
      if (at < now - this.opts.ttlMs) this.hostInvalidatedAt.delete(host);
    }
  }
}
