import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createPool, migrateService, serviceDbNames, withCredentials, withDatabase, type ServiceName } from '@sched/db';
import { Client, escapeIdentifier, type Pool } from 'pg';
import { testDatabaseUrl } from './test-env';

const SERVICES_DIR = path.resolve(__dirname, '../../../services');

export interface TestDatabaseOptions {
  /** Services whose role, schema and migrations (services/<name>/migrations) are set up. */
  services: readonly ServiceName[];
  /** Other migration folders, e.g. a test's hand-written ones. */
  migrationsFolders?: Partial<Record<ServiceName, string>>;
}

export interface TestDatabase {
  /** t_<random>: unique per call, so test files never see each other's rows. */
  name: string;
  /** Superuser URL into this database. */
  adminUrl: string;
  /** URL logging in as the service's own role, exactly as the service would in production. */
  urlFor(service: ServiceName): string;
  /** One cached pool per service role; closed by drop(). */
  pool(service: ServiceName): Pool;
  adminPool: Pool;
  /** Closes the pools and drops the database, ending any connection still open. Safe to call twice. */
  drop(): Promise<void>;
}

/** A fresh database on the test server with the given services migrated into it. */
export async function createTestDatabase(opts: TestDatabaseOptions): Promise<TestDatabase> {
  const serverUrl = testDatabaseUrl();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const adminUrl = withDatabase(serverUrl, name);
  await adminExec(serverUrl, `CREATE DATABASE ${escapeIdentifier(name)}`);

  // drop() ends connections by force; the pools' error logs would only be noise in tests.
  const quiet = { error: () => undefined };
  const pools = new Map<ServiceName, Pool>();
  const adminPool = createPool(adminUrl, { max: 3, applicationName: `test-admin:${name}`, logger: quiet });
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await Promise.all([...pools.values(), adminPool].map((p) => p.end().catch(() => undefined)));
    await adminExec(serverUrl, `DROP DATABASE IF EXISTS ${escapeIdentifier(name)} WITH (FORCE)`);
  };

  try {
    for (const service of opts.services) {
      const migrationsFolder = opts.migrationsFolders?.[service] ?? path.join(SERVICES_DIR, service, 'migrations');
      await migrateService({ adminUrl, service, migrationsFolder });
    }
  } catch (err) {
    await drop().catch(() => undefined);
    throw err;
  }

  const urlFor = (service: ServiceName) => withCredentials(adminUrl, serviceDbNames(service).role);
  return {
    name,
    adminUrl,
    urlFor,
    pool(service) {
      if (dropped) throw new Error(`test database ${name} was already dropped`);
      let pool = pools.get(service);
      if (!pool) {
        pool = createPool(urlFor(service), { max: 5, applicationName: `test:${service}`, logger: quiet });
        pools.set(service, pool);
      }
      return pool;
    },
    adminPool,
    drop,
  };
}

async function adminExec(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url, application_name: 'sched-testing' });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
