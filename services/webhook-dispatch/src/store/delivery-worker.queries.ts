import { sql } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import type { WebhookAttemptErrorKind } from '@sched/contracts';
import { disableGoneEndpoint } from './endpoint.queries';

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

const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

/**
 * Takes up to `batch` due deliveries and leases them to `token` until now + lease. Per endpoint it
 * takes at most `perEndpoint` minus those already leased, so one slow endpoint's backlog can never
 * fill a batch and starve the others. FOR UPDATE SKIP LOCKED keeps replicas that claim at the same
 * moment off each other's rows; the lease (locked_until) keeps them off while the attempt runs, and
 * expires if this replica dies mid-attempt. Concurrent claims on two replicas may briefly exceed the
 * per-endpoint cap; it is a fairness bound, not a hard limit.
 */
export async function claimDueDeliveries(db: Db, p: { batch: number; perEndpoint: number; leaseMs: number; token: string }): Promise<ClaimedDelivery[]> {
  const res = await db.execute<Record<string, unknown>>(sql`
    UPDATE webhook_dispatch.deliveries d
    SET locked_until = now() + ${p.leaseMs} * interval '1 millisecond', claim_token = ${p.token}
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
        LIMIT greatest(0, ${p.perEndpoint}::int - busy.n)
        FOR UPDATE OF x SKIP LOCKED
      ) picked
      LIMIT ${p.batch}
    ) c
    WHERE d.id = c.id
    RETURNING d.id, d.workspace_id, d.endpoint_id, d.event_id, d.event_type, d.body, d.attempt_count, d.round_attempts, d.created_at,
              c.url, c.secret_sealed, c.previous_secret_sealed, c.previous_secret_expires_at`);
  return res.rows.map((r) => ({
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
  }));
}

/** When the worker should look again: the earliest due retry, if any. */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const res = await db.execute<{ at: unknown }>(sql`
    SELECT min(greatest(d.next_attempt_at, coalesce(d.locked_until, d.next_attempt_at))) AS at
    FROM webhook_dispatch.deliveries d
    JOIN webhook_dispatch.endpoints e ON e.id = d.endpoint_id AND e.enabled
    WHERE d.status = 'pending'`);
  return toDate(res.rows[0]?.at);
}

export interface AttemptRecord {
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  errorKind: WebhookAttemptErrorKind | null;
  error: string | null;
}

export type Transition =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'failed' }
  | { kind: 'gone' };

/**
 * Records the attempt and moves the delivery on, in one transaction. The move applies only while
 * this replica still holds the claim and the delivery is pending (or, for a success, was failed
 * meanwhile because its endpoint got disabled); the attempt is recorded whatever happened, as long
 * as the delivery exists.
 * Returns false when the move did not apply.
 */
export async function recordAttempt(db: Db, d: ClaimedDelivery, token: string, a: AttemptRecord, next: Transition): Promise<boolean> {
  if (next.kind !== 'gone') return (await recordStatement(db, d, token, a, next)) > 0;
  return db.transaction(async (tx) => {
    const moved = await recordStatement(tx, d, token, a, next);
    if (moved > 0) await disableGoneEndpoint(tx, d.workspaceId, d.endpointId);
    return moved > 0;
  });
}

/**
 * One statement (one round trip, one commit on the hot path): the conditional move of the delivery
 * and the insert of the attempt, numbered from the claimed count (only the claim holder records, so
 * numbers do not collide), kept as long as the delivery still exists.
 */
async function recordStatement(db: Db | DbTx, d: ClaimedDelivery, token: string, a: AttemptRecord, next: Transition): Promise<number> {
  const attemptedAt = a.attemptedAt.toISOString();
  const common = sql`attempt_count = attempt_count + 1, round_attempts = round_attempts + 1, last_attempt_at = ${attemptedAt}::timestamptz,
    last_status_code = ${a.statusCode}, last_error = ${a.error}, locked_until = NULL, claim_token = NULL, updated_at = now()`;
  let change: ReturnType<typeof sql>;
  switch (next.kind) {
    case 'succeeded':
      change = sql`status = 'succeeded', succeeded_at = now(), failed_at = NULL, next_attempt_at = NULL`;
      break;
    case 'retry':
      change = sql`next_attempt_at = now() + ${next.delayMs} * interval '1 millisecond'`;
      break;
    case 'failed':
      change = sql`status = 'failed', failed_at = now(), next_attempt_at = NULL, dead_letter_count = dead_letter_count + 1, dead_letter_pending = true`;
      break;
    case 'gone':
      change = sql`status = 'failed', failed_at = now(), next_attempt_at = NULL`;
      break;
  }
  // A success is the truth even if the endpoint was disabled while the attempt was in flight.
  const from = next.kind === 'succeeded' ? sql`status IN ('pending', 'failed')` : sql`status = 'pending'`;
  const res = await db.execute<{ moved: number }>(sql`
    WITH moved AS (
      UPDATE webhook_dispatch.deliveries SET ${common}, ${change}
      WHERE workspace_id = ${d.workspaceId} AND id = ${d.id} AND claim_token = ${token} AND ${from}
      RETURNING id
    ), recorded AS (
      INSERT INTO webhook_dispatch.attempts (workspace_id, delivery_id, number, attempted_at, status_code, latency_ms, error_kind, error)
      SELECT ${d.workspaceId}, ${d.id}, ${d.attemptCount + 1}, ${attemptedAt}::timestamptz, ${a.statusCode}, ${a.latencyMs}, ${a.errorKind}, ${a.error}
      WHERE EXISTS (SELECT 1 FROM webhook_dispatch.deliveries WHERE workspace_id = ${d.workspaceId} AND id = ${d.id})
    )
    SELECT count(*)::int AS moved FROM moved`);
  return Number(res.rows[0]?.moved ?? 0);
}

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
