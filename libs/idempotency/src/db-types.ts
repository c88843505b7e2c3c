import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * Any drizzle Postgres database or transaction, whatever its driver and relational schema. The schema
 * parameters are `any` on purpose: this library only names the table it is given.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPgDatabase = PgDatabase<PgQueryResultHKT, any, any>;

/** The transaction type `db.transaction(async (tx) => ...)` hands out for a given db. */
export type TxOf<TDb extends AnyPgDatabase> = Parameters<Parameters<TDb['transaction']>[0]>[0];

/** Rows of a raw `execute`: node-postgres returns a QueryResult, postgres-js an array. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
