import type { QueryConfig } from 'pg';

/** The columns of a batched statement's `input`, each with its SQL type, in order. */
export type InputColumns = readonly (readonly [name: string, type: string])[];

/**
 * A batched statement (ingest, attempt records) in its two prepared forms, the same SQL but for where
 * its `input` rows come from:
 * - one item (nothing else arrived meanwhile: every item at low rates) as one parameter per column, a
 *   one-row input the planner sees as such;
 * - several as one JSON array. Not one array parameter per column: Postgres plans unnest() by the
 *   arrays' length, so it would plan every call again (about 0.4 ms of its CPU each time) instead of
 *   keeping the prepared plan. And not JSON for one item either: for the hundred rows it guesses a JSON
 *   array holds, its plan costs more than the one-row form's.
 * `sql` writes the statement around its input's SELECT (which has `ord`, the item's position, and the
 * columns); the input's parameters follow the `leading` ones every call passes first.
 */
export interface BatchStatement<Row extends Record<string, unknown>> {
  /** The query for `rows` (at least one), with `leading` as its first parameters. */
  query(leading: readonly unknown[], rows: readonly Row[]): QueryConfig;
}

export function batchStatement<Row extends Record<string, unknown>>(opts: {
  /** Prepared-statement names of the one-item and the several-items form. */
  names: { one: string; many: string };
  columns: InputColumns;
  /** How many parameters every call passes before the input's ($1..$leading). */
  leading: number;
  sql(input: string): string;
}): BatchStatement<Row> {
  const { columns, leading } = opts;
  const one = opts.sql(`SELECT 0 AS ord, ${columns.map(([name, type], n) => `$${leading + n + 1}::${type} AS ${name}`).join(', ')}`);
  const many = opts.sql(`SELECT * FROM jsonb_to_recordset($${leading + 1}::jsonb) AS i(ord int, ${columns.map(([name, type]) => `${name} ${type}`).join(', ')})`);
  return {
    query(values, rows) {
      return rows.length === 1
        ? { name: opts.names.one, text: one, values: [...values, ...columns.map(([name]) => rows[0]![name])] }
        : { name: opts.names.many, text: many, values: [...values, JSON.stringify(rows.map((row, ord) => ({ ord, ...row })))] };
    },
  };
}
