import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { withDatabase } from '../src';

/** Admin URL of the test server; the Jest global setup exports it (libs/testing). */
export const SERVER_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export const randomName = (prefix: string) => `${prefix}${randomBytes(5).toString('hex')}`;

/** Runs statements as the server's admin in one database. */
export async function adminQuery<T extends Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Tracks what a test file creates on the shared server so afterAll can remove all of it. */
export function tempResources() {
  const databases = new Set<string>();
  const roles = new Set<string>();
  const dirs = new Set<string>();
  return {
    /** A fresh database name and its admin URL; the database itself is created by the code under test or by `create`. */
    database(): { name: string; url: string } {
      const name = randomName('t_db_');
      databases.add(name);
      return { name, url: withDatabase(SERVER_URL, name) };
    },
    async create(): Promise<{ name: string; url: string }> {
      const db = this.database();
      await adminQuery(SERVER_URL, `CREATE DATABASE "${db.name}"`);
      return db;
    },
    role(name: string): string {
      roles.add(name);
      return name;
    },
    dir(): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-db-test-'));
      dirs.add(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      for (const db of databases) await adminQuery(SERVER_URL, `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
      // Roles outlive databases; throwaway ones are dropped once their databases are gone.
      for (const role of roles) await adminQuery(SERVER_URL, `DROP ROLE IF EXISTS "${role}"`);
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Writes a migrations folder the way drizzle-kit does: meta/_journal.json listing each
 * tag, and <tag>.sql with statements split by "--> statement-breakpoint".
 */
export function writeMigrations(dir: string, migrations: Array<{ tag: string; sql: string[] }>): string {
  fs.mkdirSync(path.join(dir, 'meta'), { recursive: true });
  const entries = migrations.map((m, idx) => ({ idx, version: '7', when: 1_700_000_000_000 + idx * 1000, tag: m.tag, breakpoints: true }));
  fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify({ version: '7', dialect: 'postgresql', entries }, null, 2));
  for (const m of migrations) fs.writeFileSync(path.join(dir, `${m.tag}.sql`), m.sql.join('\n--> statement-breakpoint\n'));
  return dir;
}

/** Two migrations for the booking schema: a generated-style table and a custom one with an exclusion constraint. */
export function bookingMigrations(dir: string): string {
  return writeMigrations(dir, [
    {
      tag: '0000_init',
      sql: [
        'CREATE TABLE "booking"."things" ("id" serial PRIMARY KEY NOT NULL, "resource" text NOT NULL, "during" tstzrange NOT NULL);',
        'CREATE INDEX "things_resource_idx" ON "booking"."things" USING btree ("resource");',
      ],
    },
    {
      tag: '0001_no_overlap',
      // Unqualified on purpose: custom SQL lands in the service schema through the search_path.
      sql: ['ALTER TABLE things ADD CONSTRAINT things_no_overlap EXCLUDE USING gist (resource WITH =, during WITH &&);'],
    },
  ]);
}
