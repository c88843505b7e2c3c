import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { createLogger } from '@sched/logger';
import { Pool } from 'pg';

export interface PoolOptions {
  max?: number;
  /** Shows up in pg_stat_activity, so on-call can tell which service holds a connection. */
  applicationName?: string;
  statementTimeoutMs?: number;
  /**
   * Commit without waiting for the WAL flush. Only for data whose loss in a crash is harmless (the
   * gateway's rate-limit counters): it saves an fsync per statement on a hot row.
   */
  asyncCommit?: boolean;
  /**
   * Plan every statement once per connection, for any parameters (`plan_cache_mode =
   * force_generic_plan`), instead of letting Postgres re-plan per execution when it estimates that a
   * custom plan is cheaper. Only for a pool that runs nothing but named statements whose generic plans
   * are known good (checked by EXPLAIN in their tests): every statement on it is planned generically.
   */
  genericPlans?: boolean;
  /** Defaults to a @sched/logger JSON logger; any winston logger fits. */
  logger?: { error(message: string, meta?: Record<string, unknown>): unknown };
}

/**
 * A pg.Pool that logs errors of idle clients: without an 'error' listener a dropped
 * connection (Postgres restart, network blip) would crash the whole process.
 */
export function createPool(url: string, opts: PoolOptions = {}): Pool {
  const pool = new Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName,
    statement_timeout: opts.statementTimeoutMs,
    connectionTimeoutMillis: 10_000,
    ...(opts.asyncCommit || opts.genericPlans ? { options: sessionOptions(opts) } : {}),
  });
  const logger = opts.logger ?? createLogger({ service: opts.applicationName ?? 'db' });
  pool.on('error', (err) => {
    logger.error('postgres pool client error', { error: err, application_name: opts.applicationName });
  });
  // pg-pool listens only while a client is idle. A checked-out client that the server ends between two
  // queries (57P01 when Postgres restarts) would emit an unhandled 'error' and crash the process; with this
  // listener the query in progress or the next one fails instead, and the pool discards the client on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

function sessionOptions(opts: PoolOptions): string {
  return [opts.asyncCommit && '-c synchronous_commit=off', opts.genericPlans && '-c plan_cache_mode=force_generic_plan'].filter(Boolean).join(' ');
}

export type Db = NodePgDatabase<Record<string, never>>;

/** The transaction handle that `db.transaction(async (tx) => ...)` passes; query functions accept `Db | DbTx`. */
export type DbTx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** Query builder without a relational schema: queries name their tables explicitly. */
export function createDb(pool: Pool): Db {
  return drizzle({ client: pool });
}

/** Readiness probe: resolves when the database answers, rejects (with the driver's error) when it does not. */
export async function checkPostgres(pool: Pool): Promise<void> {
  await pool.query('SELECT 1');
}
