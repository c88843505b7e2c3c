import type { Pool } from 'pg';
import { createPool, keepInStep, NotifiedCache, type NotificationListener, type NotifiedCacheOptions } from '../src';
import { SERVER_URL } from './temp-database.helper';
import { waitFor } from '../../testing/src/wait-for';

function cache(opts: Partial<NotifiedCacheOptions<string>> = {}): NotifiedCache<string, string> {
  const c = new NotifiedCache<string, string>({ maxWeight: 100, ...opts });
  c.enable();
  return c;
}

describe('NotifiedCache', () => {
  it('serves what was put, by key', () => {
    const c = cache();
    expect(c.put('a', 'A', 'g1', c.stamp())).toBe(true);
    expect(c.get('a')).toBe('A');
    expect(c.get('b')).toBeUndefined();
    c.put('a', 'A2', 'g1', c.stamp());
    expect(c.get('a')).toBe('A2');
    expect(c.size).toBe(1);
  });

  it('drops a put whose read began before an invalidation of its group or of everything', () => {
    const c = cache();
    const before = c.stamp();
    c.invalidate('g1');
    expect(c.put('a', 'stale', 'g1', before)).toBe(false);
    expect(c.get('a')).toBeUndefined();
    expect(c.put('b', 'B', 'g2', before)).toBe(true); // another group's change says nothing of g2
    expect(c.put('a', 'fresh', 'g1', c.stamp())).toBe(true); // read after the invalidation: kept

    const beforeAll = c.stamp();
    c.invalidateAll();
    expect(c.put('b', 'stale', 'g2', beforeAll)).toBe(false);
    expect(c.size).toBe(0);
  });

  it('drops the entries of an invalidated group at once, and only those', () => {
    const c = cache();
    c.put('a1', 'A1', 'g1', c.stamp());
    c.put('a2', 'A2', 'g1', c.stamp());
    c.put('b', 'B', 'g2', c.stamp());
    c.invalidate('g1');
    expect(c.get('a1')).toBeUndefined();
    expect(c.get('a2')).toBeUndefined();
    expect(c.get('b')).toBe('B');
    expect(c.size).toBe(1);
    // A key moved to another group leaves its old one.
    c.put('b', 'B3', 'g3', c.stamp());
    c.invalidate('g2');
    expect(c.get('b')).toBe('B3');
    c.invalidate('g3');
    expect(c.get('b')).toBeUndefined();
  });

  it('serves and stores nothing while disabled, and starts empty when enabled', () => {
    const c = new NotifiedCache<string, string>({ maxWeight: 10 });
    expect(c.isEnabled()).toBe(false); // until LISTEN is in place
    expect(c.put('a', 'A', 'g', c.stamp())).toBe(false);
    c.enable();
    c.put('a', 'A', 'g', c.stamp());
    const during = c.stamp();
    c.disable();
    expect(c.get('a')).toBeUndefined();
    expect(c.put('a', 'A', 'g', c.stamp())).toBe(false);
    c.enable();
    expect(c.get('a')).toBeUndefined(); // nothing from before survives
    expect(c.put('a', 'A', 'g', during)).toBe(false); // nor a read begun before
    expect(c.put('a', 'A', 'g', c.stamp())).toBe(true);
  });

  it('evicts the least recently used beyond its bound, by count or by weight, and never holds a value heavier than it', () => {
    const byCount = cache({ maxWeight: 2 });
    for (const k of ['a', 'b', 'c']) byCount.put(k, k, k, byCount.stamp());
    expect([byCount.get('a'), byCount.get('b'), byCount.get('c')]).toEqual([undefined, 'b', 'c']);

    const c = cache({ maxWeight: 10, weigh: (v) => v.length });
    c.put('1', '1111', 'g', c.stamp());
    c.put('2', '2222', 'g', c.stamp());
    expect(c.get('1')).toBe('1111'); // 1 is now the most recent
    c.put('3', '3333', 'h', c.stamp());
    expect(c.get('2')).toBeUndefined();
    expect(c.totalWeight).toBe(8);
    expect(c.put('4', 'x'.repeat(11), 'g', c.stamp())).toBe(false);
    c.put('1', '11', 'g', c.stamp()); // replacing counts the new weight only
    expect(c.totalWeight).toBe(6);
    c.invalidate('g');
    expect(c.totalWeight).toBe(4);
    c.delete('3');
    expect([c.size, c.totalWeight]).toEqual([0, 0]);
  });

  it('forgets old invalidations past its memory by refusing the reads begun before them, keeping what it holds', () => {
    const c = cache({ maxRemembered: 3 });
    const early = c.stamp();
    c.invalidate('g1');
    const later = c.stamp();
    c.put('x', 'X', 'gx', c.stamp());
    for (const g of ['g2', 'g3', 'g4']) c.invalidate(g); // g1's invalidation is forgotten
    expect(c.put('a', 'old', 'g1', early)).toBe(false); // still refused
    expect(c.put('a', 'A', 'g1', later)).toBe(true);
    expect(c.get('x')).toBe('X');
  });

  it('takes stamps from one counter, so one stamp guards puts into two caches', () => {
    const c1 = cache();
    const c2 = cache();
    const stamp = c1.stamp();
    c2.invalidate('g');
    expect(c2.put('a', 'stale', 'g', stamp)).toBe(false);
    expect(c1.put('a', 'A', 'g', stamp)).toBe(true); // c1 heard of no change
  });
});

describe('keepInStep', () => {
  const channel = `notified_cache_test_${process.pid}`;
  let pool: Pool;
  let listener: NotificationListener | undefined;
  afterAll(async () => {
    await listener?.stop();
    await pool?.end();
  });

  const until = (check: () => boolean): Promise<unknown> => waitFor(check, { intervalMs: 10 });

  it('enables the cache (empty) once LISTEN is up, drops a group on its NOTIFY and everything on `*`, and disables it when LISTEN is lost', async () => {
    pool = createPool(SERVER_URL, { logger: { error: () => undefined }, max: 3 });
    const c = new NotifiedCache<string, string>({ maxWeight: 10 });
    const heard: string[] = [];
    const invalidate = c.invalidate.bind(c);
    c.invalidate = (g) => {
      heard.push(g);
      invalidate(g);
    };
    const states: string[] = [];
    const [enable, disable] = [c.enable.bind(c), c.disable.bind(c)];
    c.enable = () => {
      states.push('enabled');
      enable();
    };
    c.disable = () => {
      states.push(`disabled holding ${c.size}`);
      disable();
      states.push(`serving ${c.get('a') ?? 'nothing'}`);
    };
    listener = keepInStep({ pool, channel, logger: { warn: () => undefined }, retryMs: 50 }, c);
    await until(() => c.isEnabled());

    c.put('a', 'A', 'g1', c.stamp());
    c.put('b', 'B', 'g2', c.stamp());
    await pool.query('SELECT pg_notify($1, $2)', [channel, 'g1']);
    await until(() => heard.includes('g1'));
    expect(c.get('a')).toBeUndefined();
    expect(c.get('b')).toBe('B');

    await pool.query('SELECT pg_notify($1, $2)', [channel, '*']);
    await until(() => c.get('b') === undefined);
    c.put('b', 'B', 'g2', c.stamp());
    await pool.query(`NOTIFY "${channel}"`); // no payload: everything too
    await until(() => c.get('b') === undefined);
    expect(heard).toEqual(['g1']); // neither is a group

    c.put('a', 'A', 'g1', c.stamp());
    const { rows } = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid() AND application_name = current_setting('application_name')`,
      [`LISTEN "${channel}"`],
    );
    expect(rows.length).toBeGreaterThanOrEqual(1);
    await pool.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [rows.map((r) => r.pid)]);
    await until(() => states.length === 4);
    expect(states).toEqual(['enabled', 'disabled holding 1', 'serving nothing', 'enabled']);
    expect(c.isEnabled()).toBe(true); // back, and empty
    expect(c.size).toBe(0);
  });
});
