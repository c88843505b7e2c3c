import { randomBytes } from 'node:crypto';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { pgSchema, serial, text } from 'drizzle-orm/pg-core';
import { Client, Pool } from 'pg';
import { inboxTable, outboxTable } from '../../src';

const ADMIN = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' };

export type TestDb = NodePgDatabase<Record<string, never>>;

export interface TestDatabase {
  name: string;
  pool: Pool;
  db: TestDb;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client(ADMIN);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A throwaway database per test file, dropped afterwards even if connections linger. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `msg_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const pool = new Pool({ ...ADMIN, database: name, max: 20 });
  pool.on('error', () => undefined); // clients killed by DROP DATABASE ... WITH (FORCE)
  return {
    name,
    pool,
    db: drizzle({ client: pool }),
    async drop() {
      await pool.end().catch(() => undefined);
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** The tables a service would get from drizzle-kit, plus an `effects` table standing for a handler's writes. */
export function serviceTables(schemaName: string) {
  const schema = pgSchema(schemaName);
  return {
    schemaName,
    outbox: outboxTable(schema),
    inbox: inboxTable(schema),
    // No unique key on purpose: an effect committed twice shows up as two rows.
    effects: schema.table('effects', { id: serial('id').primaryKey(), eventId: text('event_id').notNull(), note: text('note') }),
  };
}

export type ServiceTables = ReturnType<typeof serviceTables>;

/** Same DDL as drizzle-kit generates for outboxTable/inboxTable (kept by hand: tests run no migrations). */
export async function createServiceTables(pool: Pool, schemaName: string): Promise<ServiceTables> {
  const s = `"${schemaName}"`;
  await pool.query(`
    CREATE SCHEMA ${s};
    CREATE TABLE ${s}.outbox (
      id text PRIMARY KEY, type text NOT NULL, workspace_id text NOT NULL, payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(), published_at timestamptz,
      attempts integer NOT NULL DEFAULT 0, last_error text);
    CREATE INDEX outbox_unpublished_idx ON ${s}.outbox (created_at) WHERE published_at IS NULL;
    CREATE TABLE ${s}.inbox (event_id text PRIMARY KEY, type text NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE ${s}.effects (id serial PRIMARY KEY, event_id text NOT NULL, note text);
  `);
  return serviceTables(schemaName);
}
