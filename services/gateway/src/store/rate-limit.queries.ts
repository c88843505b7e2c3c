import type { Pool } from 'pg';
import type { Db } from '@sched/db';


/**
 * Adds `n` requests to the key's current window and returns the new total (one round trip, atomic).
 * The /v1 path sends one per batch of concurrent requests of a key (domain/counter-batcher.ts).
 */
export async function addRequests(db: Db, keyId: string, windowStart: Date, n: number): Promise<number> {
  // A named statement on the pool itself: this runs for every batch of /v1 requests; building the
  // SQL through drizzle each time showed in the gateway's profiles, and Postgres now parses it once
  // per connection.
  const res = await poolOf(db).query<{ count: number }>({ name: 'gateway_add_requests', text: ADD_REQUESTS, values: [keyId, windowStart.toISOString(), n] });
  return Number(res.rows[0]!.count);
}

const ADD_REQUESTS = `
    INSERT INTO gateway.rate_limit_counters (key_id, window_start, count)
    VALUES ($1, $2, $3)
    ON CONFLICT (key_id, window_start) DO UPDATE SET count = gateway.rate_limit_counters.count + EXCLUDED.count
    RETURNING count`;

/** The pg pool under a Db from createDb (drizzle keeps it as `$client`). */
function poolOf(db: Db): Pick<Pool, 'query'> {
  const client = (db as Db & { $client?: Pool }).$client;
  if (!client) throw new Error('rate limit counters: the Db has no pg pool');
  return client;
}

/** Counts one request in the key's current window and returns the new count. */
export function countRequest(db: Db, keyId: string, windowStart: Date): Promise<number> {
  return addRequests(db, keyId, windowStart, 1);
}
