import { sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import type { WebhookAttemptErrorKind } from '@sched/contracts';
import type { Db, DbTx } from '@sched/db';
import { createGroupCommit, type GroupCommit } from '@sched/group-commit';
import { batchStatement } from './batch-input';
import type { ClaimedDelivery } from './delivery-worker.queries';
import { disableGoneEndpoint } from './endpoint.queries';

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

/** What recording did: `moved` false when the move did not apply; `more`: the endpoint has due deliveries nobody holds. */
export interface Recorded {
  moved: boolean;
  more: boolean;
}

interface RecordItem {
  d: ClaimedDelivery;
  token: string;
  a: AttemptRecord;
  next: Exclude<Transition, { kind: 'gone' }>;
}

/** One record statement at a time: attempts that end meanwhile wait and are recorded together in the next one. */
const MAX_IN_FLIGHT = 1;
const MAX_BATCH = 64;

export interface AttemptRecords {
  /**
   * Records the attempt and moves the delivery on. The move applies only while this replica still
   * holds the claim and the delivery is pending (or, for a success, was failed meanwhile because its
   * endpoint got disabled); the attempt is recorded whatever happened, as long as the delivery exists.
   * `more` tells whether the endpoint has due deliveries nobody holds (left for its cap), which the
   * worker then claims without waiting for a poll.
   */
  record(d: ClaimedDelivery, token: string, a: AttemptRecord, next: Transition): Promise<Recorded>;
  /** The group commit's counters (tests). */
  stats: GroupCommit<RecordItem, Recorded>['stats'];
}

/**
 * Attempt records, group-committed: the attempts that end while earlier record statements run are
 * recorded together in the next one, one round trip and one commit for all (no timer: an attempt that
 * ends with nothing in flight is recorded at once, alone). Each delivery's row moves exactly as its
 * own statement would move it (recordsSql); a statement commits all of its records or none, and one
 * that fails runs again record by record, so a failure fails only its own attempt (which is then not
 * recorded: its lease expires and the delivery is tried again, as before batching). A 410 keeps its
 * own transaction, with the endpoint's disabling.
 */
export function attemptRecords(opts: { pool: Pool; db: Db }): AttemptRecords {
  const batches = createGroupCommit<RecordItem, Recorded>({
    maxInFlight: MAX_IN_FLIGHT,
    maxBatch: MAX_BATCH,
    retryAlone: () => true,
    run: (items) => recordAttempts(opts.pool, items),
  });
  return {
    async record(d, token, a, next) {
      if (next.kind !== 'gone') return batches.submit({ d, token, a, next });
      const moved = await opts.db.transaction(async (tx) => {
        const moved = await goneStatement(tx, d, token, a);
        if (moved > 0) await disableGoneEndpoint(tx, d.workspaceId, d.endpointId);
        return moved > 0;
      });
      return { moved, more: false };
    },
    stats: () => batches.stats(),
  };
}

/** The columns of an attempt to record, in the order of the statement's input. */
const RECORD_COLUMNS = [
  ['kind', 'text'],
  ['workspace_id', 'text'],
  ['id', 'text'],
  ['token', 'text'],
  ['attempted_at', 'timestamptz'],
  ['status_code', 'int'],
  ['error', 'text'],
  ['number', 'int'],
  ['latency_ms', 'int'],
  ['error_kind', 'text'],
  ['endpoint_id', 'text'],
  ['delay_ms', 'int'],
] as const;

type RecordRow = Record<(typeof RECORD_COLUMNS)[number][0], unknown>;

/**
 * One statement (one round trip, one commit) for any number of attempts. `input` has a row per
 * attempt: its position (`ord`) and RECORD_COLUMNS (transition: succeeded, retry, failed; workspace,
 * delivery, claim token, attempted at, status code, error, attempt number, latency, error kind,
 * endpoint, retry delay). Per attempt: the conditional move of its delivery and the insert of the
 * attempt, numbered from the claimed count (only the claim holder records, so numbers do not collide),
 * kept as long as the delivery still exists. The moves by transition:
 * - succeeded, from pending or failed (a success is the truth even if the endpoint was disabled while
 *   the attempt was in flight): status succeeded, succeeded_at now, failed_at and next_attempt_at NULL;
 * - retry, from pending: next_attempt_at now + the delay;
 * - failed, from pending: status failed, failed_at now, next_attempt_at NULL, dead-lettering pending
 *   for the next generation.
 * `more` looks at the deliveries as they were before the statement (other attempts of the same
 * statement were leased then, so they are not counted).
 * The deliveries are found by `id = ANY (ARRAY(SELECT id FROM input))`, which the generic plan reads
 * as a handful of primary-key lookups whatever the input's length (joined to the input alone, it
 * would hash-join a scan of the table for the hundred rows Postgres guesses a JSON array has).
 */
function recordsSql(input: string): string {
  return `
    WITH input AS (
      ${input}
    ), moved AS (
      UPDATE webhook_dispatch.deliveries d SET attempt_count = d.attempt_count + 1, round_attempts = d.round_attempts + 1,
        last_attempt_at = i.attempted_at, last_status_code = i.status_code, last_error = i.error, locked_until = NULL, claim_token = NULL,
        updated_at = now(),
        status = CASE i.kind WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' ELSE d.status END,
        succeeded_at = CASE WHEN i.kind = 'succeeded' THEN now() ELSE d.succeeded_at END,
        failed_at = CASE i.kind WHEN 'succeeded' THEN NULL WHEN 'failed' THEN now() ELSE d.failed_at END,
        next_attempt_at = CASE WHEN i.kind = 'retry' THEN now() + i.delay_ms * interval '1 millisecond' END,
        dead_letter_count = d.dead_letter_count + CASE WHEN i.kind = 'failed' THEN 1 ELSE 0 END,
        dead_letter_pending = d.dead_letter_pending OR i.kind = 'failed'
      FROM input i
      WHERE d.id = ANY (ARRAY(SELECT id FROM input)) AND d.id = i.id AND d.workspace_id = i.workspace_id AND d.claim_token = i.token
        -- Written against the input row so that it filters the rows found by id and never becomes a
        -- scan of every pending delivery (the partial indexes' predicates).
        AND d.status = ANY (CASE WHEN i.kind = 'succeeded' THEN ARRAY['pending', 'failed'] ELSE ARRAY['pending'] END)
      RETURNING d.id
    ), present AS (
      SELECT x.id, x.workspace_id FROM webhook_dispatch.deliveries x WHERE x.id = ANY (ARRAY(SELECT id FROM input))
    ), recorded AS (
      INSERT INTO webhook_dispatch.attempts (workspace_id, delivery_id, number, attempted_at, status_code, latency_ms, error_kind, error)
      SELECT i.workspace_id, i.id, i.number, i.attempted_at, i.status_code, i.latency_ms, i.error_kind, i.error
      FROM input i JOIN present p ON p.id = i.id AND p.workspace_id = i.workspace_id
      ORDER BY i.ord
    )
    SELECT i.ord,
      EXISTS (SELECT 1 FROM moved m WHERE m.id = i.id) AS moved,
      EXISTS (
        SELECT 1 FROM webhook_dispatch.deliveries x
        WHERE x.endpoint_id = i.endpoint_id AND x.status = 'pending' AND x.next_attempt_at <= now()
          AND (x.locked_until IS NULL OR x.locked_until <= now()) AND x.id <> i.id
      ) AS more
    FROM input i
    ORDER BY i.ord`;
}

/** Its one-attempt and several-attempts prepared forms (batch-input.ts). */
const RECORD = batchStatement<RecordRow>({
  names: { one: 'webhook_dispatch_record_attempt', many: 'webhook_dispatch_record_attempts' },
  columns: RECORD_COLUMNS,
  leading: 0,
  sql: recordsSql,
});

function recordRow(r: RecordItem): RecordRow {
  return {
    kind: r.next.kind,
    workspace_id: r.d.workspaceId,
    id: r.d.id,
    token: r.token,
    attempted_at: r.a.attemptedAt.toISOString(),
    status_code: r.a.statusCode,
    error: r.a.error,
    number: r.d.attemptCount + 1,
    latency_ms: r.a.latencyMs,
    error_kind: r.a.errorKind,
    endpoint_id: r.d.endpointId,
    delay_ms: r.next.kind === 'retry' ? r.next.delayMs : null,
  };
}

/** Records attempts (none a 410) in one statement; answers one Recorded per item, in order. Prepared once per connection. */
export async function recordAttempts(pool: Pool, items: readonly RecordItem[]): Promise<Recorded[]> {
  const res = await pool.query<{ ord: number; moved: boolean; more: boolean }>(RECORD.query([], items.map(recordRow)));
  const out = items.map((): Recorded => ({ moved: false, more: false }));
  for (const row of res.rows) out[row.ord] = { moved: row.moved === true, more: row.more === true };
  return out;
}

/** The 410 move and its attempt, inside the transaction that also disables the endpoint. */
async function goneStatement(tx: DbTx, d: ClaimedDelivery, token: string, a: AttemptRecord): Promise<number> {
  const attemptedAt = a.attemptedAt.toISOString();
  const res = await tx.execute<{ moved: number }>(sql`
    WITH moved AS (
      UPDATE webhook_dispatch.deliveries SET attempt_count = attempt_count + 1, round_attempts = round_attempts + 1,
        last_attempt_at = ${attemptedAt}::timestamptz, last_status_code = ${a.statusCode}, last_error = ${a.error}, locked_until = NULL,
        claim_token = NULL, updated_at = now(), status = 'failed', failed_at = now(), next_attempt_at = NULL
      WHERE workspace_id = ${d.workspaceId} AND id = ${d.id} AND claim_token = ${token} AND status = 'pending'
      RETURNING id
    ), recorded AS (
      INSERT INTO webhook_dispatch.attempts (workspace_id, delivery_id, number, attempted_at, status_code, latency_ms, error_kind, error)
      SELECT ${d.workspaceId}, ${d.id}, ${d.attemptCount + 1}, ${attemptedAt}::timestamptz, ${a.statusCode}, ${a.latencyMs}, ${a.errorKind}, ${a.error}
      WHERE EXISTS (SELECT 1 FROM webhook_dispatch.deliveries WHERE workspace_id = ${d.workspaceId} AND id = ${d.id})
    )
    SELECT count(*)::int AS moved FROM moved`);
  return Number(res.rows[0]?.moved ?? 0);
}

