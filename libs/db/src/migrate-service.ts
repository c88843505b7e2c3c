import fs from 'node:fs';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { Client, escapeIdentifier } from 'pg';
import { LOCKS, withAdvisoryLock, withClusterLock } from './advisory-lock';
import { ensureExtensions, ensureRole, ensureSchema } from './provision-service';
import { quoteIdent, serviceDbNames, type ServiceDbNames, type ServiceName } from './services';

export const MIGRATIONS_TABLE = '__drizzle_migrations';

export interface MigrateServiceOptions {
  /** Superuser URL into the target database. */
  adminUrl: string;
  /** A service name, or explicit names (tests use throwaway roles). */
  service: ServiceName | ServiceDbNames;
  /** Folder drizzle-kit generated (with meta/_journal.json); a missing or empty folder means "no migrations yet". */
  migrationsFolder: string;
  /** Set as the role's password when given (production); local trust auth needs none. */
  rolePassword?: string;
  logger?: { info(message: string, meta?: Record<string, unknown>): unknown };
}

export interface MigrateServiceResult {
  service: string;
  schema: string;
  role: string;
  /** Migrations applied by this call; 0 when already up to date. */
  applied: number;
  roleCreated: boolean;
  schemaCreated: boolean;
}

/**
 * Brings one service's schema up to date: role, schema, extensions, then drizzle's
 * migrator running as the service role so every object it creates belongs to that role.
 * Concurrent calls serialize on advisory locks and the later ones find nothing to do.
 */
export async function migrateService(opts: MigrateServiceOptions): Promise<MigrateServiceResult> {
  const names = typeof opts.service === 'string' ? serviceDbNames(opts.service) : opts.service;
  quoteIdent(names.role);
  quoteIdent(names.schema);
  const client = new Client({ connectionString: opts.adminUrl, application_name: `sched-migrate:${names.service}` });
  await client.connect();
  // An unexpected disconnect surfaces as a failed query below; without a listener it would crash the process.
  client.on('error', () => undefined);
  try {
    return await withAdvisoryLock(client, LOCKS.databaseMigration, async () => {
      const roleCreated = await withClusterLock(opts.adminUrl, () => ensureRole(client, names, opts.rolePassword));
      const schemaCreated = await ensureSchema(client, names);
      await ensureExtensions(client);
      const applied = await runMigrations(client, names, opts.migrationsFolder);
      opts.logger?.info('migrated service schema', { service: names.service, schema: names.schema, applied });
      return { ...names, applied, roleCreated, schemaCreated };
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function runMigrations(client: Client, names: ServiceDbNames, migrationsFolder: string): Promise<number> {
  if (!fs.existsSync(path.join(migrationsFolder, 'meta', '_journal.json'))) return 0;
  const before = await countApplied(client, names);
  // drizzle's migrator starts with CREATE SCHEMA IF NOT EXISTS, which Postgres checks
  // against the database's CREATE privilege even when the schema exists. The role holds
  // that privilege only for the run (under the database lock) and never keeps it: the
  // REVOKE runs even if it had the privilege before, e.g. after an interrupted run.
  const dbName = escapeIdentifier((await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db);
  const role = quoteIdent(names.role);
  const canCreate = await client.query<{ ok: boolean }>(`SELECT has_database_privilege($1, current_database(), 'CREATE') AS ok`, [names.role]);
  if (!canCreate.rows[0]?.ok) await client.query(`GRANT CREATE ON DATABASE ${dbName} TO ${role}`);
  const restore = async () => {
    await client.query('RESET ROLE');
    await client.query('RESET search_path');
    await client.query(`REVOKE CREATE ON DATABASE ${dbName} FROM ${role}`);
  };
  try {
    await client.query(`SET ROLE ${role}`);
    // Raw SQL migrations may name tables unqualified; they belong in the service schema.
    await client.query(`SET search_path TO ${quoteIdent(names.schema)}, public`);
    await migrate(drizzle({ client }), { migrationsFolder, migrationsSchema: names.schema, migrationsTable: MIGRATIONS_TABLE });
  } catch (err) {
    // The migration error is the one worth reporting; a failing cleanup on a broken connection is not.
    await restore().catch(() => undefined);
    throw err;
  }
  await restore();
  return (await countApplied(client, names)) - before;
}

async function countApplied(client: Client, names: ServiceDbNames): Promise<number> {
  const table = `${quoteIdent(names.schema)}.${quoteIdent(MIGRATIONS_TABLE)}`;
  const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [table]);
  if (!exists.rows[0]?.t) return 0;
  const res = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return res.rows[0]?.n ?? 0;
}
