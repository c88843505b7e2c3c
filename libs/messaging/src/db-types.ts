import { getTableConfig, type PgDatabase, type PgQueryResultHKT, type PgTable } from 'drizzle-orm/pg-core';
import { quoteIdent } from '@sched/db';

/**
 * Any drizzle Postgres database or transaction, whatever its driver and relational schema
 * (`Db` and `DbTx` of @sched/db included). The schema parameters are `any` on purpose:
 * this library only names tables it is given, and must accept every service's db type.
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

/** `"schema"."table"`, quoted, for SQL written as text. */
export function qualifiedTableName(table: PgTable): string {
  const cfg = getTableConfig(table);
  return `${quoteIdent(cfg.schema ?? 'public')}.${quoteIdent(cfg.name)}`;
}
