import type { PoolClient } from 'pg';
import { DELIVERIES_CHANNEL } from './delivery.queries';
import { toClaimed, type ClaimedDelivery } from './delivery-worker.queries';

export interface IngestEvent {
  workspaceId: string;
  eventId: string;
  eventType: string;
  /** The exact bytes every attempt signs and sends. */
  body: string;
}

export interface IngestClaim {
  /** Claim token written on the rows claimed here; '' when `room` is 0. */
  token: string;
  /** How many of the new rows this replica may claim (its free send slots). */
  room: number;
  perEndpoint: number;
  leaseMs: number;
}

export interface IngestedDelivery {
  delivery: ClaimedDelivery;
  /** Leased to the claim token: the caller sends it (the statement has committed when it returns in autocommit). */
  claimed: boolean;
}

export interface Ingested {
  /** False when the event's inbox row was already there: a redelivery, which wrote nothing. */
  fresh: boolean;
  deliveries: IngestedDelivery[];
}

/** Where the ingest statement runs: the pool (autocommit) or a client inside a transaction (tests). */
export type Queryable = Pick<PoolClient, 'query'>;

/**
 * The statement's text, prepared once per connection by name: planning this CTE took longer than
 * running it (about 0.8 ms of Postgres CPU per event, pg_stat_statements, docs/benchmarks.md).
 * $1 event id, $2 event type, $3 room, $4 per-endpoint cap, $5 workspace id, $6 lease ms, $7 claim
 * token, $8 body, $9 the deliveries NOTIFY channel.
 */
const INGEST_SQL = `
    WITH inboxed AS (
      INSERT INTO webhook_dispatch.inbox (event_id, type) VALUES ($1::text, $2::text)
      ON CONFLICT DO NOTHING
      RETURNING event_id
    ), wanting AS (
      SELECT e.id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at,
        ($3::int > 0
          AND NOT EXISTS (
            SELECT 1 FROM webhook_dispatch.deliveries x
            WHERE x.endpoint_id = e.id AND x.status = 'pending' AND x.next_attempt_at <= now()
              AND (x.locked_until IS NULL OR x.locked_until <= now()))
          AND (SELECT count(*) FROM webhook_dispatch.deliveries x
               WHERE x.endpoint_id = e.id AND x.status = 'pending' AND x.locked_until > now()) < $4::int
        ) AS claimable
      FROM webhook_dispatch.endpoints e
      WHERE e.workspace_id = $5::text AND e.enabled AND e.events @> ARRAY[$2::text]
        AND EXISTS (SELECT 1 FROM inboxed)
    ), picked AS (
      SELECT w.*, w.claimable AND sum(w.claimable::int) OVER (ORDER BY w.id) <= $3::int AS claim FROM wanting w
    ), inserted AS (
      INSERT INTO webhook_dispatch.deliveries (id, workspace_id, endpoint_id, event_id, event_type, body, status, next_attempt_at, locked_until, claim_token)
      SELECT 'whd_' || rtrim(translate(encode(public.gen_random_bytes(16), 'base64'), '+/', '-_'), '='),
             $5::text, p.id, $1::text, $2::text, $8::text, 'pending', now(),
             CASE WHEN p.claim THEN now() + $6::int * interval '1 millisecond' END,
             CASE WHEN p.claim THEN $7::text END
      FROM picked p
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING id, endpoint_id, claim_token IS NOT NULL AS claimed, attempt_count, round_attempts, created_at
    ), woken AS (
      SELECT pg_notify($9::text, '') FROM inserted WHERE NOT inserted.claimed LIMIT 1
    )
    -- woken is selected so that the planner keeps (and runs) it.
    SELECT f.fresh, f.woken, d.*
    FROM (SELECT count(*) > 0 AS fresh, (SELECT count(*) FROM woken)::int AS woken FROM inboxed) f
    LEFT JOIN (
      SELECT i.id, i.endpoint_id, i.claimed, i.attempt_count, i.round_attempts, i.created_at,
             p.url, p.secret_sealed, p.previous_secret_sealed, p.previous_secret_expires_at
      FROM inserted i JOIN picked p ON p.id = i.endpoint_id
    ) d ON true`;

/**
 * One statement for an event, atomic in autocommit, so the consumer needs no transaction: the
 * inbox row (ON CONFLICT DO NOTHING: a redelivered event inserts nothing else), and only if it is
 * new, a delivery for every enabled endpoint of the workspace that wants the kind (an event already
 * recorded for an endpoint is left alone), as the consumer's inbox transaction did in four round
 * trips. Each new delivery is claimed at once for this replica, up to `room`, when its endpoint has
 * no due delivery waiting before it and fewer than `perEndpoint` leased. Rows left unclaimed are
 * announced with a NOTIFY (sent on commit) so a worker claims them as usual; claimed ones need no
 * NOTIFY and no claim. A replica that dies before sending a claimed row leaves a lease that expires,
 * after which any worker claims it.
 * Delivery ids are made here, in the `whd_` format of newId (16 random bytes, base64url).
 */
export async function insertEventDeliveries(db: Queryable, e: IngestEvent, c: IngestClaim): Promise<Ingested> {
  const res = await db.query<Record<string, unknown>>({
    name: 'webhook_dispatch_ingest',
    text: INGEST_SQL,
    values: [e.eventId, e.eventType, c.room, c.perEndpoint, e.workspaceId, c.leaseMs, c.token, e.body, DELIVERIES_CHANNEL],
  });
  const fresh = res.rows[0]?.fresh === true;
  const deliveries = res.rows
    .filter((r) => r.id !== null && r.id !== undefined)
    // The event's own columns are not read back (the body can be large): they are the ones just written.
    .map((r) => ({
      claimed: r.claimed === true,
      delivery: toClaimed({ ...r, workspace_id: e.workspaceId, event_id: e.eventId, event_type: e.eventType, body: e.body }),
    }));
  return { fresh, deliveries };
}
