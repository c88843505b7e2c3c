import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { rowsOf, type AnyPgDatabase } from './db-types';
import type { IdempotencyTable } from './idempotency-table';

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Deletes expired key rows in batches and returns how many went. It spans every workspace on purpose:
 * retention is a property of the table, not of a tenant. Safe with replicas running it at once: each batch
 * claims its rows with FOR UPDATE SKIP LOCKED, so replicas take disjoint rows and never wait on each other.
 */
export async function deleteExpiredIdempotencyKeys(db: AnyPgDatabase, table: IdempotencyTable, opts: { batchSize?: number; maxBatches?: number } = {}): Promise<number> {
  const batchSize = opts.batchSize ?? 1000;
  const maxBatches = opts.maxBatches ?? 100;
  const cfg = getTableConfig(table);
  const name = sql.raw(`${cfg.schema ? `${quoteIdent(cfg.schema)}.` : ''}${quoteIdent(cfg.name)}`);
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const result = await db.execute(sql`
      WITH doomed AS (
        SELECT id FROM ${name} WHERE expires_at <= now() ORDER BY expires_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ${name} k USING doomed WHERE k.id = doomed.id RETURNING k.id`);
    const deleted = rowsOf<{ id: string }>(result).length;
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}

export interface IdempotencyCleanup {
  /** Runs one cleanup now (tests, or an operator); resolves with the rows deleted. */
  runOnce(): Promise<number>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** A periodic cleanup timer for a service's main.ts; failures are logged and retried at the next tick. */
export function startIdempotencyCleanup(opts: {
  db: AnyPgDatabase;
  table: IdempotencyTable;
  intervalMs?: number;
  logger: { warn(message: string, meta?: Record<string, unknown>): unknown; debug(message: string, meta?: Record<string, unknown>): unknown };
}): IdempotencyCleanup {
  let running: Promise<number> | undefined;
  const runOnce = (): Promise<number> => {
    running ??= deleteExpiredIdempotencyKeys(opts.db, opts.table).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    runOnce().then(
      (deleted) => opts.logger.debug('idempotency keys cleaned up', { deleted }),
      (err: unknown) => opts.logger.warn('idempotency key cleanup failed; retrying at the next tick', { error: err instanceof Error ? err.message : String(err) }),
    );
  }, opts.intervalMs ?? 60_000);
  timer.unref();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
