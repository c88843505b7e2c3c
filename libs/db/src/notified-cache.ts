import { startNotificationListener, type NotificationListener, type NotificationListenerOptions } from './listen';

/**
 * What `keepInStep` drives: a cache kept correct by the database's announcements of change.
 * NotifiedCache is one; a service's cache made of several answers the same calls.
 */
export interface KeptInStep {
  /** LISTEN is in place: start serving, empty (changes made while nobody listened went unheard). */
  enable(): void;
  /** LISTEN was lost: serve and store nothing until `enable`. */
  disable(): void;
  /** Something the entries of `group` were read from changed. */
  invalidate(group: string): void;
  /** Anything may have changed. */
  invalidateAll(): void;
}

export interface NotifiedCacheOptions<V> {
  /** Bound on the summed weight of the entries held; the least recently used go first. */
  maxWeight: number;
  /** Weight of one value (e.g. its length in bytes). Default 1: `maxWeight` then counts entries. */
  weigh?: (value: V) => number;
  /**
   * Most group invalidations remembered for the reads in flight. Past it the oldest is forgotten by
   * refusing every read stamped before it (held entries are not affected). Default 1024.
   */
  maxRemembered?: number;
}

interface Entry<V> {
  value: V;
  group: string;
  weight: number;
}

/**
 * Stamps come from one process-wide counter, bumped by every invalidation of any cache: a stamp taken
 * from one cache may guard puts into another (one read that fills two caches takes one stamp).
 */
let lastStamp = 0;

const one = () => 1;

/**
 * A bounded map kept correct by invalidation: every entry belongs to a group (the id the database
 * announces when a row it was read from changes), and the rules of staying in step live here once:
 *
 * - it serves and stores only while enabled (LISTEN in place) and is emptied when enabled or disabled;
 * - an invalidation drops its group's entries at once;
 * - a read takes a `stamp()` before it starts; its `put` is refused if its group (or everything) was
 *   invalidated after that stamp, since the read may have seen the row from before the change;
 * - the summed weight stays within `maxWeight`, least recently used out first; a value heavier than
 *   the whole bound is never stored.
 *
 * `get` allocates nothing.
 */
export class NotifiedCache<K, V> implements KeptInStep {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly keysOfGroup = new Map<string, Set<K>>();
  /** Group → stamp of its last invalidation, oldest first. */
  private readonly invalidatedAt = new Map<string, number>();
  /** A put stamped below this is refused: everything was invalidated (or forgotten) at this stamp. */
  private floor = 0;
  private enabled = false;
  private weight = 0;
  private readonly maxWeight: number;
  private readonly weigh: (value: V) => number;
  private readonly maxRemembered: number;

  constructor(opts: NotifiedCacheOptions<V>) {
    this.maxWeight = opts.maxWeight;
    this.weigh = opts.weigh ?? one;
    this.maxRemembered = Math.max(1, opts.maxRemembered ?? 1024);
  }

  /** Number of entries held. */
  get size(): number {
    return this.entries.size;
  }

  /** Summed weight of the entries held. */
  get totalWeight(): number {
    return this.weight;
  }

  isEnabled(): boolean {
    return this.enabled;
  }

  enable(): void {
    this.invalidateAll();
    this.enabled = true;
  }

  disable(): void {
    this.enabled = false;
    this.invalidateAll();
  }

  /** Take before a read starts; pass to the `put` of what it read. */
  stamp(): number {
    return lastStamp;
  }

  get(key: K): V | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Most recently used last: eviction takes from the front.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Stores `value` under `key` as a member of `group`, unless the cache is disabled, `group` (or
   * everything) was invalidated after `stamp`, or the value alone outweighs the bound. True if stored.
   */
  put(key: K, value: V, group: string, stamp: number): boolean {
    if (!this.enabled || stamp < this.floor) return false;
    const at = this.invalidatedAt.get(group);
    if (at !== undefined && at > stamp) return false;
    const weight = this.weigh(value);
    if (weight > this.maxWeight) return false;
    const old = this.entries.get(key);
    if (old !== undefined) this.remove(key, old);
    this.entries.set(key, { value, group, weight });
    let keys = this.keysOfGroup.get(group);
    if (keys === undefined) {
      keys = new Set();
      this.keysOfGroup.set(group, keys);
    }
    keys.add(key);
    this.weight += weight;
    for (const [k, e] of this.entries) {
      if (this.weight <= this.maxWeight) break;
      this.remove(k, e);
    }
    return true;
  }

  /** Drops one entry (e.g. found expired by its owner). */
  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.remove(key, entry);
  }

  invalidate(group: string): void {
    const stamp = ++lastStamp;
    this.invalidatedAt.delete(group); // re-inserted last: the map stays oldest first
    this.invalidatedAt.set(group, stamp);
    if (this.invalidatedAt.size > this.maxRemembered) {
      const [oldest, at] = this.invalidatedAt.entries().next().value as [string, number];
      this.invalidatedAt.delete(oldest);
      // Reads stamped before it can no longer be told apart: refuse them all.
      this.floor = Math.max(this.floor, at);
    }
    const keys = this.keysOfGroup.get(group);
    if (keys === undefined) return;
    this.keysOfGroup.delete(group);
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry !== undefined) {
        this.entries.delete(key);
        this.weight -= entry.weight;
      }
    }
  }

  invalidateAll(): void {
    this.floor = ++lastStamp;
    this.entries.clear();
    this.keysOfGroup.clear();
    this.invalidatedAt.clear();
    this.weight = 0;
  }

  private remove(key: K, entry: Entry<V>): void {
    this.entries.delete(key);
    this.weight -= entry.weight;
    const keys = this.keysOfGroup.get(entry.group);
    if (keys === undefined) return;
    keys.delete(key);
    if (keys.size === 0) this.keysOfGroup.delete(entry.group);
  }
}

export type KeepInStepOptions = Omit<NotificationListenerOptions, 'onNotification' | 'onListening' | 'onLost'>;

/**
 * Keeps `cache` in step with the database on every replica: LISTENs on `opts.channel`, whose NOTIFY
 * payload names the group that changed (`*`, or no payload, for everything). The cache serves only
 * while LISTEN is in place and starts empty each time LISTEN is (re)established, since changes made
 * meanwhile went unheard.
 */
export function keepInStep(opts: KeepInStepOptions, cache: KeptInStep): NotificationListener {
  return startNotificationListener({
    ...opts,
    onNotification: (group) => (group === '*' || group === '' ? cache.invalidateAll() : cache.invalidate(group)),
    onListening: () => cache.enable(),
    onLost: () => cache.disable(),
  });
}
