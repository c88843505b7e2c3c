import { and, asc, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import type { WebhookAttemptErrorKind, WebhookDeliveryStatus } from '@sched/contracts';
import type { AttemptView, DeliveryFilter, DeliveryPosition, DeliveryStore, DeliveryView } from '../domain/webhook-deliveries';
import { attempts, deliveries } from './schema';

type Conn = Db | DbTx;

/** NOTIFY channel that wakes the delivery workers; Postgres delivers it only on commit. */
export const DELIVERIES_CHANNEL = 'webhook_dispatch_deliveries';

/** Attempts shown per delivery in the admin list. */
const ATTEMPTS_SHOWN = 50;

export async function notifyDeliveriesDue(db: Conn): Promise<void> {
  await db.execute(sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, '')`);
}

/** Back to pending, due now, with a fresh retry budget; the webhook-id (event id) and body stay. */
const requeued = () => ({
  status: 'pending',
  roundAttempts: 0,
  nextAttemptAt: sql`now()`,
  lockedUntil: null,
  claimToken: null,
  succeededAt: null,
  failedAt: null,
  deadLetterPending: false,
  updatedAt: sql`now()`,
});

export async function requeueDelivery(db: Conn, workspaceId: string, id: string, from: readonly WebhookDeliveryStatus[]): Promise<boolean> {
  const rows = await db
    .update(deliveries)
    .set(requeued())
    .where(and(eq(deliveries.workspaceId, workspaceId), eq(deliveries.id, id), inArray(deliveries.status, [...from])))
    .returning({ id: deliveries.id });
  if (rows.length > 0) await notifyDeliveriesDue(db);
  return rows.length > 0;
}

export async function requeueFailedInRange(db: Conn, workspaceId: string, endpointId: string, from: Date, to: Date): Promise<number> {
  const rows = await db
    .update(deliveries)
    .set(requeued())
    .where(
      and(
        eq(deliveries.workspaceId, workspaceId),
        eq(deliveries.endpointId, endpointId),
        eq(deliveries.status, 'failed'),
        gte(deliveries.createdAt, from),
        lt(deliveries.createdAt, to),
      ),
    )
    .returning({ id: deliveries.id });
  if (rows.length > 0) await notifyDeliveriesDue(db);
  return rows.length;
}

/**
 * A replayed DLQ message re-queues its delivery only while the delivery is still failed from that
 * very dead-lettering (`generation`): a message replayed twice, or one made stale by a later replay
 * through the admin API, changes nothing. The endpoint must still be enabled.
 */
export async function requeueDeadLettered(tx: DbTx, workspaceId: string, id: string, generation: number): Promise<boolean> {
  const rows = await tx.execute<{ id: string }>(sql`
    UPDATE webhook_dispatch.deliveries d
    SET status = 'pending', round_attempts = 0, next_attempt_at = now(), locked_until = NULL, claim_token = NULL,
        succeeded_at = NULL, failed_at = NULL, dead_letter_pending = false, updated_at = now()
    FROM webhook_dispatch.endpoints e
    WHERE d.workspace_id = ${workspaceId} AND d.id = ${id} AND d.status = 'failed' AND d.dead_letter_count = ${generation}
      AND e.workspace_id = d.workspace_id AND e.id = d.endpoint_id AND e.enabled
    RETURNING d.id`);
  if (rows.rows.length > 0) await notifyDeliveriesDue(tx);
  return rows.rows.length > 0;
}

/**
 * The endpoint was disabled: its pending deliveries stop (failed, not dead-lettered: nobody is there
 * to receive a replay). The claim token stays, so an attempt already in flight that succeeds can
 * still record its success.
 */
export async function failPendingOfEndpoint(tx: Conn, workspaceId: string, endpointId: string, reason: string): Promise<void> {
  await tx
    .update(deliveries)
    .set({ status: 'failed', failedAt: sql`now()`, nextAttemptAt: null, lockedUntil: null, lastError: reason, updatedAt: sql`now()` })
    .where(and(eq(deliveries.workspaceId, workspaceId), eq(deliveries.endpointId, endpointId), eq(deliveries.status, 'pending')));
}

export async function locateDelivery(db: Conn, id: string): Promise<{ workspaceId: string; endpointId: string } | null> {
  const [row] = await db.select({ workspaceId: deliveries.workspaceId, endpointId: deliveries.endpointId }).from(deliveries).where(eq(deliveries.id, id));
  return row ?? null;
}

export async function listDeliveries(db: Conn, workspaceId: string, filter: DeliveryFilter, after: DeliveryPosition | null, limit: number): Promise<DeliveryView[]> {
  const where: SQL[] = [eq(deliveries.workspaceId, workspaceId)];
  if (filter.status) where.push(eq(deliveries.status, filter.status));
  if (filter.endpointId) where.push(eq(deliveries.endpointId, filter.endpointId));
  if (after) where.push(sql`(${deliveries.createdAt}, ${deliveries.id}) < (${after.createdAt.toISOString()}::timestamptz, ${after.id})`);
  const rows = await db
    .select({
      id: deliveries.id,
      workspaceId: deliveries.workspaceId,
      endpointId: deliveries.endpointId,
      eventId: deliveries.eventId,
      eventType: deliveries.eventType,
      status: deliveries.status,
      attemptCount: deliveries.attemptCount,
      nextAttemptAt: deliveries.nextAttemptAt,
      lastError: deliveries.lastError,
      createdAt: deliveries.createdAt,
      updatedAt: deliveries.updatedAt,
      succeededAt: deliveries.succeededAt,
      failedAt: deliveries.failedAt,
    })
    .from(deliveries)
    .where(and(...where))
    .orderBy(desc(deliveries.createdAt), desc(deliveries.id))
    .limit(limit);
  const byDelivery = await attemptsOf(
    db,
    workspaceId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    ...r,
    status: r.status as WebhookDeliveryStatus,
    // A pending delivery's next attempt is meaningful; a finished one keeps none.
    nextAttemptAt: r.status === 'pending' ? r.nextAttemptAt : null,
    attempts: (byDelivery.get(r.id) ?? []).slice(-ATTEMPTS_SHOWN),
  }));
}

async function attemptsOf(db: Conn, workspaceId: string, ids: string[]): Promise<Map<string, AttemptView[]>> {
  const out = new Map<string, AttemptView[]>();
  if (ids.length === 0) return out;
  const rows = await db
    .select({
      deliveryId: attempts.deliveryId,
      number: attempts.number,
      attemptedAt: attempts.attemptedAt,
      statusCode: attempts.statusCode,
      latencyMs: attempts.latencyMs,
      errorKind: attempts.errorKind,
      error: attempts.error,
    })
    .from(attempts)
    .where(and(eq(attempts.workspaceId, workspaceId), inArray(attempts.deliveryId, ids)))
    .orderBy(asc(attempts.deliveryId), asc(attempts.number));
  for (const { deliveryId, ...a } of rows) {
    const list = out.get(deliveryId) ?? [];
    list.push({ ...a, errorKind: a.errorKind as WebhookAttemptErrorKind | null });
    out.set(deliveryId, list);
  }
  return out;
}

export function createDeliveryStore(db: Db): DeliveryStore {
  return {
    list: (ws, filter, after, limit) => listDeliveries(db, ws, filter, after, limit),
    locate: (id) => locateDelivery(db, id),
    requeue: (ws, id, from) => requeueDelivery(db, ws, id, from),
    requeueFailedInRange: (ws, endpointId, from, to) => requeueFailedInRange(db, ws, endpointId, from, to),
  };
}
