import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * Any drizzle Postgres database or transaction, whatever its driver and relational schema
 * (`Db` and `DbTx` of @sched/db included). The schema parameters are `any` on purpose:
 * this library only names tables it is given, and must accept every service's db type.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyPgDatabase = PgDatabase<PgQueryResultHKT, any, any>;

/** The transaction type `db.transaction(async (tx) => ...)` hands out for a given db. */
export type TxOf<TDb extends AnyPgDatabase> = Parameters<Parameters<TDb['transaction']>[0]>[0];
