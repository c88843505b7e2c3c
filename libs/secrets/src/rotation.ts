import type { SecretBox } from './index';
import { sealedKeyId } from './sealed-format';

/**
 * Re-sealing stored values under the ring's current key (`pnpm admin secrets rotate`, docs/operations.md
 * "Rotating the secrets key"). Each service runs it over its OWN schema, behind its admin endpoint
 * `POST /admin/v1/secrets/<service>/rotate` (decisions.md: each service owns its schema).
 *
 * One call walks every sealed column in bounded batches. A batch is one short transaction:
 *
 *   SELECT <key>, <aad columns>, <sealed columns> FROM <table>
 *    WHERE <a sealed column names another key id than the current one> AND <key> > <last key seen>
 *    ORDER BY <key> LIMIT <batch> FOR UPDATE SKIP LOCKED
 *   -- open each value with its own key id and associated data, seal it again under the current key
 *   UPDATE <table> SET <column> = <re-sealed> … WHERE <key> = …
 *
 * so a row being written by the service right now is skipped (picked up by the next call), a writer
 * arriving meanwhile waits for one batch at most, and the associated data (the row's identity, which
 * the service chose at seal time) is kept. Only values not yet under the current key are selected:
 * a call cut short (time budget, `maxBatches`, a crash, Ctrl-C) loses nothing, and the next continues
 * where it stopped. A value that cannot be opened (its key id is no longer in the ring, or it fails
 * authentication) is left as it is and reported, with the error naming the key id.
 */

/** What the rotation needs of a pg Pool (structural, so this library needs no database dependency). */
export interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}
export interface SqlPool extends SqlClient {
  connect(): Promise<SqlClient & { release(err?: Error | boolean): void }>;
}

/** The sealed columns of one table, and how each value's associated data is made from its row. */
export interface SealedColumns {
  /** Schema-qualified table name, e.g. `calendar_sync.calendar_connections`. */
  table: string;
  /** Its primary key column (text). */
  key: string;
  /** Columns holding sealed values (NULL allowed: skipped). */
  columns: readonly string[];
  /** Columns the associated data is computed from. */
  aadColumns: readonly string[];
  /** The associated data `column` of `row` was sealed with: exactly what the service passes to seal(). */
  associatedData(row: Record<string, unknown>, column: string): string;
  /** SQL condition on the row (no parameters) when only some rows hold sealed values, e.g. `sealed`. */
  where?: string;
}

export interface SealedColumnReport {
  table: string;
  column: string;
  /** Sealed values stored in the column. */
  total: number;
  /** Of them, sealed under the current key. */
  current: number;
  /** Values per key id. */
  byKeyId: Record<string, number>;
  /** Re-sealed by this call (0 for a status). */
  rotated: number;
  /** Values this call could not open (left as they were; see `errors`). */
  failed: number;
}

export interface SealedValuesReport {
  /** The key new values are sealed under. */
  keyId: string;
  /** Every key id the service can open, the current one first. */
  keyIds: readonly string[];
  columns: SealedColumnReport[];
  /** True when this call went through every table to its end (false: stopped by the time or batch limit). */
  finished: boolean;
  /** The first values that could not be opened: where they are and why (never a key or plaintext). */
  errors: Array<{ table: string; column: string; rowId: string; message: string }>;
}

export interface RotateOptions {
  /** Rows per batch (one transaction each). Default 100. */
  batchSize?: number;
  /** Stop after this many batches in all. Default: no limit. */
  maxBatches?: number;
  /** Start no new batch after this long, so one call stays well inside an HTTP timeout. Default 2000 ms. */
  timeBudgetMs?: number;
}

const MAX_ERRORS = 20;

function ident(name: string): string {
  return name
    .split('.')
    .map((part) => `"${part.replace(/"/g, '""')}"`)
    .join('.');
}

/** SQL: the value in `col` is sealed under another key than $1. */
const notCurrent = (col: string) => `(${ident(col)} IS NOT NULL AND split_part(${ident(col)}, '.', 2) <> $1)`;

async function countColumn(pool: SqlClient, spec: SealedColumns, column: string, currentId: string): Promise<SealedColumnReport> {
  const { rows } = await pool.query(
    `SELECT split_part(${ident(column)}, '.', 2) AS key_id, count(*)::int AS n FROM ${ident(spec.table)}
      WHERE ${ident(column)} IS NOT NULL${spec.where ? ` AND (${spec.where})` : ''} GROUP BY 1 ORDER BY 1`,
  );
  const byKeyId: Record<string, number> = {};
  for (const r of rows) byKeyId[String(r.key_id)] = Number(r.n);
  const total = Object.values(byKeyId).reduce((a, b) => a + b, 0);
  return { table: spec.table, column, total, current: byKeyId[currentId] ?? 0, byKeyId, rotated: 0, failed: 0 };
}

/** How many values each sealed column holds per key id (for `pnpm admin secrets status`). */
export async function sealedValuesStatus(pool: SqlClient, box: SecretBox, specs: readonly SealedColumns[]): Promise<SealedValuesReport> {
  const columns: SealedColumnReport[] = [];
  for (const spec of specs) for (const column of spec.columns) columns.push(await countColumn(pool, spec, column, box.currentKeyId));
  return { keyId: box.currentKeyId, keyIds: box.keyIds, columns, finished: true, errors: [] };
}

/** One batch of one table: re-seals what it locked; returns the last key seen, or null at the table's end. */
async function rotateBatch(
  pool: SqlPool,
  box: SecretBox,
  spec: SealedColumns,
  after: string | null,
  batchSize: number,
  tally: Map<string, { rotated: number; failed: number }>,
  errors: SealedValuesReport['errors'],
): Promise<string | null> {
  const current = box.currentKeyId;
  const selected = [...new Set([spec.key, ...spec.aadColumns, ...spec.columns])];
  const client = await pool.connect();
  let released = false;
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      `SELECT ${selected.map(ident).join(', ')} FROM ${ident(spec.table)}
        WHERE (${spec.columns.map(notCurrent).join(' OR ')})${spec.where ? ` AND (${spec.where})` : ''}
          ${after === null ? '' : `AND ${ident(spec.key)} > $3`}
        ORDER BY ${ident(spec.key)} LIMIT $2
          FOR UPDATE SKIP LOCKED`,
      after === null ? [current, batchSize] : [current, batchSize, after],
    );
    const ids: string[] = [];
    const values: Array<Array<string | null>> = spec.columns.map(() => []);
    for (const row of rows) {
      const rowId = String(row[spec.key]);
      let changed = false;
      const next = spec.columns.map((column) => {
        const sealed = row[column];
        if (typeof sealed !== 'string' || sealedKeyId(sealed) === current) return null;
        const counts = tally.get(column)!;
        try {
          const aad = spec.associatedData(row, column);
          const resealed = box.seal(box.open(sealed, aad), aad);
          counts.rotated += 1;
          changed = true;
          return resealed;
        } catch (err) {
          counts.failed += 1;
          if (errors.length < MAX_ERRORS) errors.push({ table: spec.table, column, rowId, message: err instanceof Error ? err.message : String(err) });
          return null;
        }
      });
      if (!changed) continue;
      ids.push(rowId);
      next.forEach((v, i) => values[i]!.push(v));
    }
    if (ids.length > 0) {
      const sets = spec.columns.map((c, i) => `${ident(c)} = COALESCE(v.c${i}, t.${ident(c)})`).join(', ');
      const arrays = spec.columns.map((_, i) => `$${i + 2}::text[]`).join(', ');
      const names = spec.columns.map((_, i) => `c${i}`).join(', ');
      await client.query(
        `UPDATE ${ident(spec.table)} AS t SET ${sets}
           FROM unnest($1::text[], ${arrays}) AS v(k, ${names})
          WHERE t.${ident(spec.key)} = v.k`,
        [ids, ...values],
      );
    }
    await client.query('COMMIT');
    return rows.length < batchSize ? null : String(rows[rows.length - 1]![spec.key]);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(err instanceof Error ? err : true);
    released = true;
    throw err;
  } finally {
    if (!released) client.release();
  }
}

/**
 * Re-seals, under the current key, the values of `specs` that name another key id; then reports every
 * column's counts. Bounded by `timeBudgetMs` and `maxBatches`: call again until every column's
 * `current` equals its `total` (values that cannot be opened, and rows locked at that moment, stay).
 */
export async function rotateSealedValues(pool: SqlPool, box: SecretBox, specs: readonly SealedColumns[], opts: RotateOptions = {}): Promise<SealedValuesReport> {
  const batchSize = opts.batchSize ?? 100;
  const budget = opts.timeBudgetMs ?? 2000;
  const started = Date.now();
  const errors: SealedValuesReport['errors'] = [];
  const tallies = new Map<SealedColumns, Map<string, { rotated: number; failed: number }>>();
  let batches = 0;
  let finished = true;

  tables: for (const spec of specs) {
    const tally = new Map(spec.columns.map((c) => [c, { rotated: 0, failed: 0 }]));
    tallies.set(spec, tally);
    let after: string | null = null;
    do {
      if ((opts.maxBatches !== undefined && batches >= opts.maxBatches) || Date.now() - started >= budget) {
        finished = false;
        break tables;
      }
      batches += 1;
      after = await rotateBatch(pool, box, spec, after, batchSize, tally, errors);
    } while (after !== null);
  }

  const columns: SealedColumnReport[] = [];
  for (const spec of specs) {
    for (const column of spec.columns) {
      const counts = await countColumn(pool, spec, column, box.currentKeyId);
      const tally = tallies.get(spec)?.get(column);
      columns.push({ ...counts, rotated: tally?.rotated ?? 0, failed: tally?.failed ?? 0 });
    }
  }
  return { keyId: box.currentKeyId, keyIds: box.keyIds, columns, finished, errors };
}

/** The admin API's JSON form of a report (libs/contracts `sealedValuesReportSchema`). */
export function sealedValuesOut(service: string, report: SealedValuesReport) {
  return {
    service,
    key_id: report.keyId,
    key_ids: [...report.keyIds],
    finished: report.finished,
    columns: report.columns.map((c) => ({ table: c.table, column: c.column, total: c.total, current: c.current, by_key_id: c.byKeyId, rotated: c.rotated, failed: c.failed })),
    errors: report.errors.map((e) => ({ table: e.table, column: e.column, row_id: e.rowId, message: e.message })),
  };
}
