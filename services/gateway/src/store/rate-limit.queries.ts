import { sql } from 'drizzle-orm';
import type { Db } from '@sched/db';


/** Counts one request in the key's current window and returns the new count (one round trip, atomic). */
export async function countRequest(db: Db, keyId: string, windowStart: Date): Promise<number> {
  const res = await db.execute<{ count: number }>(sql`
    INSERT INTO gateway.rate_limit_counters (key_id, window_start, count)
    VALUES (${keyId}, ${windowStart.toISOString()}, 1)
    ON CONFLICT (key_id, window_start) DO UPDATE SET count = gateway.rate_limit_counters.count + 1
    RETURNING count`);
  return Number(res.rows[0]!.count);
}

/** Removes windows that ended before `before`; run periodically by one timer per replica (harmless if several). */
export async function sweepCounters(db: Db, before: Date): Promise<number> {
  const res = await db.execute(sql`DELETE FROM gateway.rate_limit_counters WHERE window_start < ${before.toISOString()}`);
  return res.rowCount ?? 0;
}
