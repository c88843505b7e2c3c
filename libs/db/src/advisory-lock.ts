import { Client, type ClientBase } from 'pg';
import { withDatabase } from './database-url';
import { PG, pgErrorCode } from './pg-errors';

/**
 * Keys for pg_advisory_lock(int, int). The first number marks the locks as ours; the
 * second says what they guard. Advisory locks are scoped to one database, which is
 * why cluster-wide work (roles) locks in the `postgres` maintenance database.
 */
const LOCK_CLASS = 0x5c4ed;
export const LOCKS = {
  /** Per target database: one migrateService at a time (schemas, extensions, migrations, database grants). */
  databaseMigration: 1,
  /** Cluster-wide: role creation and ALTER ROLE, which race across databases. */
  roles: 2,
} as const;

export async function withAdvisoryLock<T>(client: ClientBase, key: number, fn: () => Promise<T>): Promise<T> {
  await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, key]);
  try {
    return await fn();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, key]);
  }
}

/**
 * Runs fn while holding the roles lock in the maintenance database. When that database
 * does not exist, fn still runs: callers also tolerate duplicate-object errors.
 */
export async function withClusterLock<T>(adminUrl: string, fn: () => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(adminUrl, 'postgres'), application_name: 'sched-migrate-lock' });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    if (pgErrorCode(err) === PG.invalidCatalogName) return fn();
    throw err;
  }
  // A dropped lock connection must not crash the process; the lock is gone with it anyway.
  client.on('error', () => undefined);
  try {
    return await withAdvisoryLock(client, LOCKS.roles, fn);
  } finally {
    await client.end().catch(() => undefined);
  }
}
