import { sql } from 'drizzle-orm';
import type { Db } from '@sched/db';


/**
 * Adds `n` requests to the key's current window and returns the new total (one round trip, atomic).
 * The /v1 path sends one per batch of concurrent requests of a key (domain/counter-batcher.ts).
 */
export async function addRequests(db: Db, keyId: string, windowStart: Date, n: number): Promise<number> {
  const res = await db.execute<{ count: number }>(sql`
    INSERT INTO gateway.rate_limit_counters (key_id, window_start, count)
    VALUES (${keyId}, ${windowStart.toISOString()}, ${n})
    ON CONFLICT (key_id, window_start) DO UPDATE SET count = gateway.rate_limit_counters.count + EXCLUDED.count
    RETURNING count`);
  return Number(res.rows[0]!.count);
}

/** Counts one request in the key's current window and returns the new count. */
export function countRequest(db: Db, keyId: string, windowStart: Date): Promise<number> {
  return addRequests(db, keyId, windowStart, 1);
}

/** Removes windows that ended before `before`; run periodically by one timer per replica (harmless if several). */
export async function sweepCounters(db: Db, before: Date): Promise<number> {
  const res = await db.execute(sql`DELETE FROM gateway.rate_limit_counters WHERE window_start < ${before.toISOString()}`);
  return res.rowCount ?? 0;
}
