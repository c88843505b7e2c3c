import { Client, escapeIdentifier } from 'pg';
import { databaseName, withDatabase } from './database-url';
import { isDuplicateError } from './pg-errors';

/**
 * Creates the database named in adminUrl when missing, connecting to the `postgres`
 * maintenance database to do it. Returns true when it created it. Safe to race:
 * the loser of two concurrent CREATE DATABASE calls treats "already exists" as done.
 */
export async function ensureDatabase(adminUrl: string): Promise<boolean> {
  const name = databaseName(adminUrl);
  const client = new Client({ connectionString: withDatabase(adminUrl, 'postgres'), application_name: 'sched-migrate' });
  await client.connect();
  client.on('error', () => undefined);
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      if (isDuplicateError(err)) return false;
      throw err;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
