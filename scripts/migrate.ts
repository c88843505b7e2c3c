/**
 * `pnpm migrate [service...]`: creates the database if needed and brings each service's
 * schema up to date as that service's own role. Env: MIGRATE_DATABASE_URL (superuser URL
 * into the target database) and DB_PASSWORD_<SERVICE> to set a role's login password.
 */
import path from 'node:path';
import { DEFAULT_MIGRATE_DATABASE_URL, MigrateError, migrateServices, passwordsFromEnv } from '../libs/db/src';

async function main(): Promise<number> {
  const adminUrl = process.env.MIGRATE_DATABASE_URL || DEFAULT_MIGRATE_DATABASE_URL;
  try {
    await migrateServices({
      adminUrl,
      servicesDir: path.resolve(__dirname, '..', 'services'),
      only: process.argv.slice(2),
      passwords: passwordsFromEnv(process.env),
      onMigrated: (r) => console.log(`migrate: ${r.service} ... ${r.applied > 0 ? `${r.applied} applied` : 'up to date'}`),
    });
    return 0;
  } catch (err) {
    // Expected failures (Postgres down, bad SQL, unknown service) read best without a stack.
    console.error(err instanceof MigrateError ? `migrate failed: ${err.message}` : err);
    return 1;
  }
}

void main().then((code) => {
  process.exitCode = code;
});
