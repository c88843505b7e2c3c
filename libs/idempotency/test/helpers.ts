import { sql } from 'drizzle-orm';
import { pgSchema, text } from 'drizzle-orm/pg-core';
import { createDb, createPool, type Db } from '@sched/db';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import type { Pool } from 'pg';
import { idempotencyProtocolSql, idempotencyTable } from '../src';

export const schema = pgSchema('idem_test');
export const keys = idempotencyTable(schema);
/** A stand-in for a service's own table: what `execute` mutates. */
export const effects = schema.table('effects', { id: text('id').primaryKey(), note: text('note').notNull() });

/** The DDL drizzle-kit generates for idempotencyTable (kept in step by the column test in run-idempotent.test.ts). */
const DDL = `
CREATE SCHEMA idem_test;
CREATE TABLE idem_test.idempotency_keys (
  id text PRIMARY KEY NOT NULL,
  workspace_id text NOT NULL,
  fingerprint text NOT NULL,
  response_status integer NOT NULL,
  response_body text NOT NULL,
  sealed boolean DEFAULT false NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  expires_at timestamp with time zone NOT NULL
);
CREATE INDEX idempotency_keys_expires_idx ON idem_test.idempotency_keys USING btree (expires_at);
CREATE TABLE idem_test.effects (id text PRIMARY KEY, note text NOT NULL);
`;

export interface Harness {
  tdb: TestDatabase;
  pool: Pool;
  db: Db;
  effectCount(): Promise<number>;
  keyRows(): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const tdb = await createTestDatabase({ services: [] });
  await tdb.adminPool.query(DDL);
  await tdb.adminPool.query(idempotencyProtocolSql('idem_test'));
  const pool = createPool(tdb.adminUrl, { max: 6, applicationName: 'idempotency-test', logger: { error: () => undefined } });
  const db = createDb(pool);
  return {
    tdb,
    pool,
    db,
    async effectCount() {
      const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(effects);
      return row!.n;
    },
    async keyRows() {
      return (await pool.query('SELECT * FROM idem_test.idempotency_keys ORDER BY created_at')).rows;
    },
    async close() {
      await pool.end();
      await tdb.drop();
    },
  };
}
