import { slotsCacheKey } from '../src/domain/slots-cache';
import { NotifiedSlotsCache } from '../src/store/notified-slots-cache';

const T0 = 1_000_000;
const key = slotsCacheKey('wsp_1', 'evt_1', '2026-06-08', '2026-06-08', 'UTC');
/** An answer as the cache holds it (its JSON's UTF-8 bytes), and back. */
const b = (json: string) => Buffer.from(json, 'utf8');
const text = (bytes: Buffer | undefined) => bytes?.toString('utf8');

function cache(opts: Partial<{ ttlMs: number; maxBytes: number }> = {}): NotifiedSlotsCache {
  const c = new NotifiedSlotsCache({ ttlMs: 5000, maxBytes: 1000, ...opts });
  c.enable();
  return c;
}

describe('NotifiedSlotsCache', () => {
  it('keys by workspace, Event Type, dates and timezone, with no way for two keys to collide', () => {
    expect(slotsCacheKey('a', 'b', 'c', 'd', 'e')).not.toBe(slotsCacheKey('a', 'b', 'c', 'd', 'E'));
    expect(slotsCacheKey('a\u0000b', 'c', 'd', 'e', 'f')).toBe(slotsCacheKey('a', 'b\u0000c', 'd', 'e', 'f')); // ids never hold NUL
    expect(slotsCacheKey('wsp_1', 'evt_1', '2026-06-08', '2026-06-09', 'UTC')).not.toBe(key);
  });

  it('serves what was put until the TTL or the given expiry, whichever is first', () => {
    const c = cache();
    expect(c.put(c.ticket(key, T0), 'hst_1', b('[1]'), Number.POSITIVE_INFINITY, T0)).toBe(true);
    expect(text(c.get(key, T0 + 4999))).toBe('[1]');
    expect(c.get(key, T0 + 5000)).toBeUndefined();
    expect(c.size).toBe(0);
    c.put(c.ticket(key, T0), 'hst_1', b('[2]'), T0 + 100, T0);
    expect(text(c.get(key, T0 + 99))).toBe('[2]');
    expect(c.get(key, T0 + 100)).toBeUndefined();
    expect(c.put(c.ticket(key, T0), 'hst_1', b('[3]'), T0, T0)).toBe(false); // already expired
  });

  it('drops a host\'s answers on its invalidation only', () => {
    const c = cache();
    const other = slotsCacheKey('wsp_1', 'evt_2', '2026-06-08', '2026-06-08', 'UTC');
    c.put(c.ticket(key, T0), 'hst_1', b('[1]'), Infinity, T0);
    c.put(c.ticket(other, T0), 'hst_2', b('[2]'), Infinity, T0);
    c.invalidate('hst_1');
    expect(c.get(key, T0)).toBeUndefined();
    expect(text(c.get(other, T0))).toBe('[2]');
    c.put(c.ticket(key, T0), 'hst_1', b('[1b]'), Infinity, T0); // computed after the invalidation: fine
    expect(text(c.get(key, T0))).toBe('[1b]');
  });

  it('refuses an answer whose inputs may predate an invalidation that came while it was computed', () => {
    const c = cache();
    const ticket = c.ticket(key, T0);
    c.invalidate('hst_1');
    expect(c.put(ticket, 'hst_1', b('[stale]'), Infinity, T0)).toBe(false);
    const ticket2 = c.ticket(key, T0);
    c.invalidateAll();
    expect(c.put(ticket2, 'hst_1', b('[stale]'), Infinity, T0)).toBe(false);
    expect(c.get(key, T0)).toBeUndefined();
  });

  it('neither serves nor stores while disabled, and starts empty when enabled again', () => {
    const c = cache();
    c.put(c.ticket(key, T0), 'hst_1', b('[1]'), Infinity, T0);
    const ticket = c.ticket(key, T0);
    c.disable();
    expect(c.isEnabled()).toBe(false);
    expect(c.get(key, T0)).toBeUndefined();
    expect(c.put(c.ticket(key, T0), 'hst_1', b('[1]'), Infinity, T0)).toBe(false);
    c.enable();
    expect(c.get(key, T0)).toBeUndefined();
    expect(c.put(ticket, 'hst_1', b('[from before]'), Infinity, T0)).toBe(false);
    expect(new NotifiedSlotsCache({ ttlMs: 0, maxBytes: 1000 }).isEnabled()).toBe(false);
  });

  it('evicts the least recently used answers beyond its byte bound, and never holds one larger than it', () => {
    const c = cache({ maxBytes: 10 });
    const k = (n: number) => slotsCacheKey('w', `evt_${n}`, 'a', 'b', 'UTC');
    c.put(c.ticket(k(1), T0), 'h', b('1111'), Infinity, T0);
    c.put(c.ticket(k(2), T0), 'h', b('2222'), Infinity, T0);
    expect(text(c.get(k(1), T0))).toBe('1111'); // 1 is now the most recent
    c.put(c.ticket(k(3), T0), 'h', b('3333'), Infinity, T0);
    expect(c.get(k(2), T0)).toBeUndefined();
    expect(text(c.get(k(1), T0))).toBe('1111');
    expect(c.sizeBytes).toBe(8);
    expect(c.put(c.ticket(k(4), T0), 'h', b('x'.repeat(11)), Infinity, T0)).toBe(false);
    c.put(c.ticket(k(1), T0), 'h', b('11'), Infinity, T0); // replacing counts the new size only
    expect(c.sizeBytes).toBe(6);
    c.put(c.ticket(k(1), T0), 'h', b('"é"'), Infinity, T0); // bytes, not characters
    expect(c.sizeBytes).toBe(8);
  });

  it('counts an answer\'s life from its ticket, so a slow computation is never stored past the TTL', () => {
    const c = cache({ ttlMs: 100 });
    const slow = c.ticket(key, T0);
    expect(c.put(slow, 'hst_1', b('[slow]'), Infinity, T0 + 100)).toBe(false);
    c.put(c.ticket(key, T0), 'hst_1', b('[1]'), Infinity, T0 + 60);
    expect(text(c.get(key, T0 + 99))).toBe('[1]');
    expect(c.get(key, T0 + 100)).toBeUndefined();
  });

  it('forgets old host invalidations without ever reviving an answer they dropped', () => {
    const c = cache({ ttlMs: 100, maxBytes: 1_000_000 });
    const early = c.ticket(key, T0);
    for (let i = 0; i < 2000; i++) c.invalidate(`hst_${i}`); // more than it remembers: the oldest are forgotten
    c.put(c.ticket(key, T0 + 200), 'hst_x', b('[x]'), Infinity, T0 + 200);
    expect(text(c.get(key, T0 + 200))).toBe('[x]');
    // hst_1's invalidation is forgotten, yet the answer begun before it still cannot be stored.
    expect(c.put(early, 'hst_1', b('[old]'), Infinity, T0 + 200)).toBe(false);
  });
});
