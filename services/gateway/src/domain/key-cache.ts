/**
 * Remembers key lookups for a short time so a busy key costs no database read per request.
 * The TTL is capped at 5 s: a revoked or expired key stops working on every replica within that
 * bound (decisions.md §3), because each replica's entry expires by itself.
 */
export const MAX_KEY_CACHE_TTL_MS = 5000;

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10000,
    private readonly now: () => number = Date.now,
  ) {
    if (ttlMs > MAX_KEY_CACHE_TTL_MS) throw new Error(`key cache TTL must be at most ${MAX_KEY_CACHE_TTL_MS} ms`);
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs = this.ttlMs): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + Math.min(ttlMs, this.ttlMs) });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
