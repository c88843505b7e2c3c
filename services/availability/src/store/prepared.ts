import type { Pool, QueryResultRow } from 'pg';

/**
 * The pool the hot path's statements run on (app.ts): its own connections, opened with
 * `genericPlans` (libs/db createPool), so each statement below is parsed and planned once per
 * connection and never again, whatever its parameters. Nothing else runs on it: every statement on it
 * is one of this service's named statements, whose generic plan test/prepared-statements.test.ts
 * checks with EXPLAIN.
 */
export type StatementPool = Pick<Pool, 'query'>;

/**
 * A named prepared statement: pg prepares it by its name once per connection, and no query builder
 * runs per call (building a drizzle query cost more Node CPU than Postgres spent running it). Names
 * are unique per service.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/** Runs `statement` with `values` on `pool`; the rows as pg parses them (timestamptz → Date, json → value). */
export async function runNamed<R extends QueryResultRow>(pool: StatementPool, statement: NamedStatement, values: unknown[]): Promise<R[]> {
  const res = await pool.query<R>({ name: statement.name, text: statement.text, values });
  return res.rows;
}
