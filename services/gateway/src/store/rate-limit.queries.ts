import type { Pool } from 'pg';

/**
 * The pool the counters are written through (main.ts: its own pool, with async commit). A raw pg
 * query rather than drizzle: see addRequests.
 */
export type CounterPool = Pick<Pool, 'query'>;

/**
 * Adds `n` requests to the key's current window and returns the new total (one round trip, atomic).
 * The /v1 path sends one per batch of concurrent requests of a key (domain/counter-batcher.ts).
 */
export async function addRequests(pool: CounterPool, keyId: string, windowStart: Date, n: number): Promise<number> {
  // A named statement on the pool: this runs for every batch of /v1 requests; building the SQL
  // through drizzle each time showed in the gateway's profiles, and Postgres now parses it once per
  // connection.
  const res = await pool.query<{ count: number }>({ name: 'gateway_add_requests', text: ADD_REQUESTS, values: [keyId, windowStart.toISOString(), n] });
  return Number(res.rows[0]!.count);
}

const ADD_REQUESTS = `
    INSERT INTO gateway.rate_limit_counters (key_id, window_start, count)
    VALUES ($1, $2, $3)
    ON CONFLICT (key_id, window_start) DO UPDATE SET count = gateway.rate_limit_counters.count + EXCLUDED.count
    RETURNING count`;

/** Counts one request in the key's current window and returns the new count. */
export function countRequest(pool: CounterPool, keyId: string, windowStart: Date): Promise<number> {
  return addRequests(pool, keyId, windowStart, 1);
}
