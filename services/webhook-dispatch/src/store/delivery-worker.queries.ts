import { sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { Db } from '@sched/db';
import { DELIVERIES_CHANNEL } from './delivery.queries';

/**
 * The delivery worker's queries. They are the one place that reads across workspaces: the worker
 * serves every workspace's queue. Each update after the claim names the delivery's workspace too.
 */

export interface ClaimedDelivery {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  body: string;
  attemptCount: number;
  roundAttempts: number;
  createdAt: Date;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
}

export const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

/**
 * Takes up to `batch` due deliveries and leases them to `token` until now + lease. Per endpoint it
 * takes at most `perEndpoint` minus those already leased, so one slow endpoint's backlog can never
 * fill a batch and starve the others. FOR UPDATE SKIP LOCKED keeps replicas that claim at the same
 * moment off each other's rows; the lease (locked_until) keeps them off while the attempt runs, and
 * expires if this replica dies mid-attempt. Concurrent claims on two replicas may briefly exceed the
 * per-endpoint cap; it is a fairness bound, not a hard limit.
 */
export async function claimDueDeliveries(pool: Pool, p: { batch: number; perEndpoint: number; leaseMs: number; token: string }): Promise<ClaimedDelivery[]> {
  const res = await pool.query<Record<string, unknown>>({ name: 'webhook_dispatch_claim', text: CLAIM_SQL, values: [p.leaseMs, p.token, p.perEndpoint, p.batch] });
  return res.rows.map(toClaimed);
}

const CLAIM_SQL = `
    UPDATE webhook_dispatch.deliveries d
    SET locked_until = now() + $1::int * interval '1 millisecond', claim_token = $2::text
    FROM (
      SELECT picked.id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at
      FROM (
        SELECT DISTINCT endpoint_id FROM webhook_dispatch.deliveries
        WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until <= now())
      ) due
      JOIN webhook_dispatch.endpoints e ON e.id = due.endpoint_id AND e.enabled
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS n FROM webhook_dispatch.deliveries x
        WHERE x.endpoint_id = due.endpoint_id AND x.status = 'pending' AND x.locked_until > now()
      ) busy
      CROSS JOIN LATERAL (
        SELECT x.id FROM webhook_dispatch.deliveries x
        WHERE x.endpoint_id = due.endpoint_id AND x.status = 'pending' AND x.next_attempt_at <= now()
          AND (x.locked_until IS NULL OR x.locked_until <= now())
        ORDER BY x.next_attempt_at, x.id
        LIMIT greatest(0, $3::int - busy.n)
        FOR UPDATE OF x SKIP LOCKED
      ) picked
      LIMIT $4::int
    ) c
    WHERE d.id = c.id
    RETURNING d.id, d.workspace_id, d.endpoint_id, d.event_id, d.event_type, d.body, d.attempt_count, d.round_attempts, d.created_at,
              c.url, c.secret_sealed, c.previous_secret_sealed, c.previous_secret_expires_at`;

/** A delivery row joined with its endpoint's url and secrets, as the claim and ingest statements return it. */
export function toClaimed(r: Record<string, unknown>): ClaimedDelivery {
  return {
    id: String(r.id),
    workspaceId: String(r.workspace_id),
    endpointId: String(r.endpoint_id),
    eventId: String(r.event_id),
    eventType: String(r.event_type),
    body: String(r.body),
    attemptCount: Number(r.attempt_count),
    roundAttempts: Number(r.round_attempts),
    createdAt: toDate(r.created_at)!,
    url: String(r.url),
    secretSealed: String(r.secret_sealed),
    previousSecretSealed: r.previous_secret_sealed === null ? null : String(r.previous_secret_sealed),
    previousSecretExpiresAt: toDate(r.previous_secret_expires_at),
  };
}

/**
 * Gives back deliveries claimed with `token` that this replica will not send after all (its own
 * count for the endpoint is at the cap): due now, unleased, and the workers are woken for them.
 */
export async function releaseClaimed(pool: Pool, token: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query({ name: 'webhook_dispatch_release', text: RELEASE_SQL, values: [token, ids] });
}

const RELEASE_SQL = `
    WITH released AS (
      UPDATE webhook_dispatch.deliveries SET locked_until = NULL, claim_token = NULL
      WHERE id = ANY($2::text[]) AND claim_token = $1::text AND status = 'pending'
      RETURNING id
    )
    SELECT pg_notify('${DELIVERIES_CHANNEL}', '') FROM released LIMIT 1`;

/** When the worker should look again: the earliest due retry, if any. */
export async function nextDueAt(pool: Pool): Promise<Date | null> {
  const res = await pool.query<{ at: unknown }>({ name: 'webhook_dispatch_next_due', text: NEXT_DUE_SQL });
  return toDate(res.rows[0]?.at);
}

const NEXT_DUE_SQL = `
    SELECT min(greatest(d.next_attempt_at, coalesce(d.locked_until, d.next_attempt_at))) AS at
    FROM webhook_dispatch.deliveries d
    JOIN webhook_dispatch.endpoints e ON e.id = d.endpoint_id AND e.enabled
    WHERE d.status = 'pending'`;

export interface DeadLetterDue {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  generation: number;
  attemptCount: number;
  lastError: string | null;
  failedAt: Date;
  firstAttemptAt: Date | null;
}

/** Failed deliveries whose DLQ message the broker has not confirmed yet (at-least-once; ids are stable). */
export async function deadLettersToPublish(db: Db, limit: number): Promise<DeadLetterDue[]> {
  const res = await db.execute<Record<string, unknown>>(sql`
    SELECT d.id, d.workspace_id, d.endpoint_id, d.event_id, d.event_type, d.dead_letter_count, d.attempt_count, d.last_error, d.failed_at,
           (SELECT min(a.attempted_at) FROM webhook_dispatch.attempts a WHERE a.delivery_id = d.id) AS first_attempt_at
    FROM webhook_dispatch.deliveries d
    WHERE d.dead_letter_pending
    ORDER BY d.failed_at
    LIMIT ${limit}`);
  return res.rows.map((r) => ({
    id: String(r.id),
    workspaceId: String(r.workspace_id),
    endpointId: String(r.endpoint_id),
    eventId: String(r.event_id),
    eventType: String(r.event_type),
    generation: Number(r.dead_letter_count),
    attemptCount: Number(r.attempt_count),
    lastError: r.last_error === null ? null : String(r.last_error),
    failedAt: toDate(r.failed_at) ?? new Date(),
    firstAttemptAt: toDate(r.first_attempt_at),
  }));
}

export async function markDeadLetterPublished(db: Db, d: Pick<DeadLetterDue, 'workspaceId' | 'id' | 'generation'>): Promise<void> {
  await db.execute(sql`
    UPDATE webhook_dispatch.deliveries SET dead_letter_pending = false
    WHERE workspace_id = ${d.workspaceId} AND id = ${d.id} AND dead_letter_count = ${d.generation}`);
}

/** For the metrics: deliveries waiting, and the age of the oldest one. */
export async function pendingBacklog(db: Db): Promise<{ pending: number; oldestPendingSeconds: number }> {
  const res = await db.execute<{ pending: unknown; oldest: unknown }>(sql`
    SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
    FROM webhook_dispatch.deliveries WHERE status = 'pending'`);
  const row = res.rows[0];
  return { pending: Number(row?.pending ?? 0), oldestPendingSeconds: Number(row?.oldest ?? 0) };
}
