import type { PoolClient } from 'pg';
import { batchStatement } from './batch-input';
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
 * The ingest statement, for any number of events (their inbox rows, deliveries and claims). `input`
 * has a row per event: its position (`ord`), event_id, event_type, workspace_id, body. Parameters: $1
 * room, $2 per-endpoint cap, $3 lease ms, $4 claim token, $5 the deliveries NOTIFY channel; the input's
 * from $6. Prepared once per connection by name: planning this CTE took longer than running it (about
 * 0.8 ms of Postgres CPU per event, pg_stat_statements, docs/benchmarks.md).
 * Per endpoint, the events claim in their order, as many as the endpoint's cap leaves, and only while
 * no older delivery of it waits unclaimed; the room goes to the events in their order. So the rows of
 * an endpoint claimed here are always its oldest new ones, as when each event had its own statement.
 * Inbox rows are inserted in event id order: two replicas' statements over the same events (a
 * redelivery) take their locks in the same order. Endpoints are found by `workspace_id = ANY
 * (ARRAY(…))`, which the generic plan reads as a few index lookups whatever the input's length (joined
 * to the input alone, it would hash-join a scan of the table for the hundred rows Postgres guesses a
 * JSON array has).
 */
function ingestSql(input: string): string {
  return `
    WITH input AS (
      ${input}
    ), inboxed AS (
      INSERT INTO webhook_dispatch.inbox (event_id, type)
      SELECT event_id, event_type FROM input ORDER BY event_id
      ON CONFLICT DO NOTHING
      RETURNING event_id
    ), wanting AS (
      SELECT i.ord, i.event_id, i.event_type, i.workspace_id, i.body,
             e.id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at
      FROM input i
      JOIN inboxed b ON b.event_id = i.event_id
      JOIN webhook_dispatch.endpoints e ON e.workspace_id = i.workspace_id AND e.enabled AND e.events @> ARRAY[i.event_type]
      WHERE e.workspace_id = ANY (ARRAY(SELECT workspace_id FROM input))
    ), endpoint_state AS (
      SELECT w.id,
        EXISTS (
          SELECT 1 FROM webhook_dispatch.deliveries x
          WHERE x.endpoint_id = w.id AND x.status = 'pending' AND x.next_attempt_at <= now()
            AND (x.locked_until IS NULL OR x.locked_until <= now())) AS waiting,
        (SELECT count(*) FROM webhook_dispatch.deliveries x
         WHERE x.endpoint_id = w.id AND x.status = 'pending' AND x.locked_until > now()) AS busy
      FROM (SELECT DISTINCT id FROM wanting) w
    ), ranked AS (
      SELECT w.*,
        $1::int > 0 AND NOT s.waiting AND row_number() OVER (PARTITION BY w.id ORDER BY w.ord) <= $2::int - s.busy AS claimable
      FROM wanting w JOIN endpoint_state s ON s.id = w.id
    ), picked AS (
      SELECT r.*, r.claimable AND sum(r.claimable::int) OVER (ORDER BY r.ord, r.id) <= $1::int AS claim FROM ranked r
    ), inserted AS (
      INSERT INTO webhook_dispatch.deliveries (id, workspace_id, endpoint_id, event_id, event_type, body, status, next_attempt_at, locked_until, claim_token)
      SELECT 'whd_' || rtrim(translate(encode(public.gen_random_bytes(16), 'base64'), '+/', '-_'), '='),
             p.workspace_id, p.id, p.event_id, p.event_type, p.body, 'pending', now(),
             CASE WHEN p.claim THEN now() + $3::int * interval '1 millisecond' END,
             CASE WHEN p.claim THEN $4::text END
      FROM picked p
      ORDER BY p.ord, p.id
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING id, endpoint_id, event_id, claim_token IS NOT NULL AS claimed, attempt_count, round_attempts, created_at
    ), woken AS (
      SELECT pg_notify($5::text, '') FROM inserted WHERE NOT inserted.claimed LIMIT 1
    )
    -- woken is selected so that the planner keeps (and runs) it.
    SELECT i.ord, b.event_id IS NOT NULL AS fresh, (SELECT count(*) FROM woken)::int AS woken, d.*
    FROM input i
    LEFT JOIN inboxed b ON b.event_id = i.event_id
    LEFT JOIN (
      SELECT n.id, n.endpoint_id, n.event_id AS delivered_event_id, n.claimed, n.attempt_count, n.round_attempts, n.created_at,
             p.url, p.secret_sealed, p.previous_secret_sealed, p.previous_secret_expires_at
      FROM inserted n JOIN picked p ON p.id = n.endpoint_id AND p.event_id = n.event_id
    ) d ON d.delivered_event_id = i.event_id
    ORDER BY i.ord, d.endpoint_id`;
}

const INGEST_COLUMNS = [
  ['event_id', 'text'],
  ['event_type', 'text'],
  ['workspace_id', 'text'],
  ['body', 'text'],
] as const;

/** Its one-event and several-events prepared forms (batch-input.ts). */
const INGEST = batchStatement<Record<(typeof INGEST_COLUMNS)[number][0], string>>({
  names: { one: 'webhook_dispatch_ingest_event', many: 'webhook_dispatch_ingest_events' },
  columns: INGEST_COLUMNS,
  leading: 5,
  sql: ingestSql,
});

/**
 * One statement for several events, atomic in autocommit, so the consumer needs no transaction: for
 * each event its inbox row (ON CONFLICT DO NOTHING: a redelivered event inserts nothing else), and only
 * if it is new, a delivery for every enabled endpoint of the workspace that wants the kind (an event
 * already recorded for an endpoint is left alone), as the consumer's inbox transaction did in four
 * round trips per event. New deliveries are claimed at once for this replica, up to `room`, when their
 * endpoint has no due delivery waiting before them and fewer than `perEndpoint` leased (counting the
 * ones claimed for earlier events of the same statement). Rows left unclaimed are announced with a
 * NOTIFY (sent on commit) so a worker claims them as usual; claimed ones need no NOTIFY and no claim.
 * A replica that dies before sending a claimed row leaves a lease that expires, after which any
 * worker claims it. Everything is committed together or not at all.
 * Delivery ids are made here, in the `whd_` format of newId (16 random bytes, base64url).
 * The events must have distinct ids (the same event twice in one statement would be fresh twice).
 * Answers one Ingested per event, in order.
 */
export async function insertEventsDeliveries(db: Queryable, events: readonly IngestEvent[], c: IngestClaim): Promise<Ingested[]> {
  const rows = events.map((e) => ({ event_id: e.eventId, event_type: e.eventType, workspace_id: e.workspaceId, body: e.body }));
  const common = [c.room, c.perEndpoint, c.leaseMs, c.token, DELIVERIES_CHANNEL];
  const res = await db.query<Record<string, unknown>>(INGEST.query(common, rows));
  const out: Ingested[] = events.map(() => ({ fresh: false, deliveries: [] }));
  for (const r of res.rows) {
    const ingested = out[Number(r.ord)]!;
    ingested.fresh = r.fresh === true;
    if (r.id === null || r.id === undefined) continue;
    const e = events[Number(r.ord)]!;
    // The event's own columns are not read back (the body can be large): they are the ones just written.
    ingested.deliveries.push({
      claimed: r.claimed === true,
      delivery: toClaimed({ ...r, workspace_id: e.workspaceId, event_id: e.eventId, event_type: e.eventType, body: e.body }),
    });
  }
  return out;
}

/** One event alone: `insertEventsDeliveries` with one element. */
export async function insertEventDeliveries(db: Queryable, e: IngestEvent, c: IngestClaim): Promise<Ingested> {
  return (await insertEventsDeliveries(db, [e], c))[0]!;
}
