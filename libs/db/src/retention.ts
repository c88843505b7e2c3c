import { sql, type SQL } from 'drizzle-orm';
import { getTableConfig, PgDialect, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import type { Pool } from 'pg';

/**
 * One table's retention: rows whose `ageColumn` is older than `retentionMs` (and that match `where`)
 * are deleted. The job deletes in batches of rows claimed with FOR UPDATE SKIP LOCKED, so replicas
 * running it at once take disjoint rows and never wait on each other, and each batch is its own short
 * transaction. An index on `ageColumn` (partial on `where`, where there is one) must support it.
 */
export interface RetentionRule {
  /** The table pruned; its primary key identifies the rows. */
  table: PgTable;
  /** The timestamp whose age decides. */
  ageColumn: PgColumn;
  /** How long a row is kept after `ageColumn`; 0 for an expiry column (the row goes once it has passed). */
  retentionMs: number;
  /** A condition rows must also meet to go (e.g. only published outbox rows), over this table's columns. */
  where?: SQL;
  /** Metric label and log key; the table's name by default. Two rules of one table may share it. */
  label?: string;
  /**
   * Rows of other tables that belong to a pruned row (foreign key to its single-column primary key):
   * deleted in the same statement, before it, and counted under their own label.
   */
  children?: readonly RetentionChild[];
}

export interface RetentionChild {
  table: PgTable;
  /** The child's column referencing the parent's primary key. */
  column: PgColumn;
  label?: string;
}

/** Where the job reports what it deleted: the `retention_rows_pruned_total{table}` counter (libs/http createRetentionMetrics). */
export interface RetentionMetrics {
  pruned(table: string, rows: number): void;
}

/** Any drizzle Postgres database (node-postgres or another driver): the job only runs raw statements. */
export interface RetentionDb {
  execute(query: SQL): PromiseLike<unknown>;
}

export interface PruneOptions {
  /** Rows per statement (and per transaction). Default 1000. */
  batchSize?: number;
  /** Statements per rule and run, so one run is bounded too; the rest waits for the next run. Default 100. */
  maxBatches?: number;
  /** Called after every batch with the rows it deleted per label (the parent's and its children's). */
  onBatch?(deleted: Record<string, number>): void;
  /** Checked between batches: a stopping process ends the run early. */
  stopped?(): boolean;
}

export const DEFAULT_RETENTION_BATCH_SIZE = 1000;
export const DEFAULT_RETENTION_MAX_BATCHES = 100;

function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  return ((result as { rows?: Record<string, unknown>[] }).rows ?? []) as Record<string, unknown>[];
}

function qualified(table: PgTable): SQL {
  const cfg = getTableConfig(table);
  return cfg.schema ? sql`${sql.identifier(cfg.schema)}.${sql.identifier(cfg.name)}` : sql`${sql.identifier(cfg.name)}`;
}

function primaryKeyOf(table: PgTable): string[] {
  const cfg = getTableConfig(table);
  const single = cfg.columns.filter((c) => c.primary).map((c) => c.name);
  if (single.length > 0) return single;
  const composite = cfg.primaryKeys[0]?.columns.map((c) => c.name);
  if (composite && composite.length > 0) return composite;
  throw new Error(`retention: table ${cfg.name} has no primary key`);
}

/** The label of a rule's own rows. */
export function retentionLabel(rule: RetentionRule): string {
  return rule.label ?? getTableConfig(rule.table).name;
}

function childLabel(child: RetentionChild): string {
  return child.label ?? getTableConfig(child.table).name;
}

function ageLimit(rule: RetentionRule): SQL {
  if (!Number.isFinite(rule.retentionMs) || rule.retentionMs < 0) throw new Error(`retention: retentionMs of ${retentionLabel(rule)} must be >= 0`);
  const column = sql.identifier(rule.ageColumn.name);
  const where = rule.where ? sql` AND (${rule.where})` : sql``;
  return sql`${column} <= now() - make_interval(secs => ${rule.retentionMs / 1000}::float8)${where}`;
}

/** The SELECT that claims one batch (without the lock), for EXPLAIN: tests check that an index serves it. */
export function retentionSelectSql(rule: RetentionRule, batchSize = DEFAULT_RETENTION_BATCH_SIZE): SQL {
  const key = sql.join(
    primaryKeyOf(rule.table).map((k) => sql.identifier(k)),
    sql`, `,
  );
  return sql`SELECT ${key} FROM ${qualified(rule.table)} WHERE ${ageLimit(rule)} ORDER BY ${sql.identifier(rule.ageColumn.name)} LIMIT ${batchSize}`;
}

/**
 * EXPLAIN of one batch's claim, with sequential scans discouraged as on a large table: tests check that an
 * index serves every rule (no `Seq Scan` in the plan). Read-only.
 */
export async function explainRetentionRule(pool: Pool, rule: RetentionRule): Promise<string> {
  const q = new PgDialect().sqlToQuery(retentionSelectSql(rule));
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    const res = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.sql}`, q.params);
    return res.rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

/** One statement: claim up to `batchSize` rows, delete their children and them, count per label. */
function batchSql(rule: RetentionRule, batchSize: number): SQL {
  const key = primaryKeyOf(rule.table);
  const children = rule.children ?? [];
  if (children.length > 0 && key.length !== 1) throw new Error(`retention: children need a single-column primary key on ${retentionLabel(rule)}`);
  const parts: SQL[] = [sql`doomed AS (${retentionSelectSql(rule, batchSize)} FOR UPDATE SKIP LOCKED)`];
  children.forEach((c, i) => {
    parts.push(
      sql`${sql.identifier(`c${i}`)} AS (DELETE FROM ${qualified(c.table)} WHERE ${sql.identifier(c.column.name)} IN (SELECT ${sql.identifier(key[0]!)} FROM doomed) RETURNING 1)`,
    );
  });
  const match = sql.join(
    key.map((k) => sql`t.${sql.identifier(k)} = doomed.${sql.identifier(k)}`),
    sql` AND `,
  );
  parts.push(sql`gone AS (DELETE FROM ${qualified(rule.table)} t USING doomed WHERE ${match} RETURNING 1)`);
  const counts = [sql`(SELECT count(*) FROM gone)::int AS n`, ...children.map((_, i) => sql`(SELECT count(*) FROM ${sql.identifier(`c${i}`)})::int AS ${sql.identifier(`c${i}`)}`)];
  return sql`WITH ${sql.join(parts, sql`, `)} SELECT ${sql.join(counts, sql`, `)}`;
}

/**
 * Deletes what the rule lets go, batch by batch, until a batch comes back short (nothing older left
 * that another replica does not hold) or `maxBatches` ran. Returns the rows deleted per label.
 */
export async function pruneTable(db: RetentionDb, rule: RetentionRule, opts: PruneOptions = {}): Promise<Record<string, number>> {
  const batchSize = opts.batchSize ?? DEFAULT_RETENTION_BATCH_SIZE;
  const maxBatches = opts.maxBatches ?? DEFAULT_RETENTION_MAX_BATCHES;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('retention: batchSize must be a positive integer');
  const label = retentionLabel(rule);
  const children = rule.children ?? [];
  const total: Record<string, number> = { [label]: 0 };
  for (const c of children) total[childLabel(c)] = 0;
  const statement = batchSql(rule, batchSize);
  for (let i = 0; i < maxBatches && !opts.stopped?.(); i++) {
    const row = rowsOf(await db.execute(statement))[0] ?? {};
    const deleted: Record<string, number> = { [label]: Number(row.n ?? 0) };
    children.forEach((c, j) => {
      const l = childLabel(c);
      deleted[l] = (deleted[l] ?? 0) + Number(row[`c${j}`] ?? 0);
    });
    for (const [l, n] of Object.entries(deleted)) total[l] = (total[l] ?? 0) + n;
    opts.onBatch?.(deleted);
    if (deleted[label]! < batchSize) break;
  }
  return total;
}

export interface RetentionLogger {
  info(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
}

export interface RetentionJobOptions {
  db: RetentionDb;
  rules: readonly RetentionRule[];
  /** Time between runs; the first run is one interval after the start. */
  intervalMs: number;
  batchSize?: number;
  maxBatches?: number;
  logger: RetentionLogger;
  metrics?: RetentionMetrics;
}

export interface RetentionJob {
  /** Runs every rule once now (tests, an operator); resolves with the rows deleted per label. A run in progress is joined. */
  runOnce(): Promise<Record<string, number>>;
  /** Stops the timer, ends a run in progress after its current batch, and waits for it. */
  stop(): Promise<void>;
}

/**
 * The periodic pruning job of a service's main: every rule, one after another, each in bounded batches.
 * A failing rule is logged and retried at the next run; the others still run. One info line per run
 * that deleted something, with the rows per table.
 */
export function startRetentionJob(opts: RetentionJobOptions): RetentionJob {
  let stopped = false;
  let running: Promise<Record<string, number>> | undefined;
  const labels = new Set<string>();
  for (const rule of opts.rules) {
    labels.add(retentionLabel(rule));
    for (const c of rule.children ?? []) labels.add(childLabel(c));
  }
  // Every series exists from the start (at 0), so a rate over it is defined before the first deletion.
  for (const l of labels) opts.metrics?.pruned(l, 0);

  const run = async (): Promise<Record<string, number>> => {
    const rows: Record<string, number> = {};
    for (const rule of opts.rules) {
      if (stopped) break;
      try {
        await pruneTable(opts.db, rule, {
          batchSize: opts.batchSize,
          maxBatches: opts.maxBatches,
          stopped: () => stopped,
          onBatch: (deleted) => {
            for (const [l, n] of Object.entries(deleted)) {
              rows[l] = (rows[l] ?? 0) + n;
              if (n > 0) opts.metrics?.pruned(l, n);
            }
          },
        });
      } catch (err) {
        opts.logger.warn('retention: pruning failed; retrying at the next run', {
          table: retentionLabel(rule),
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    const pruned = Object.fromEntries(Object.entries(rows).filter(([, n]) => n > 0));
    if (Object.keys(pruned).length > 0) opts.logger.info('retention pruned rows', { rows: pruned });
    return rows;
  };
  const runOnce = (): Promise<Record<string, number>> => {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void runOnce(), opts.intervalMs);
  timer.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
