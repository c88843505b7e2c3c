import { sql, type SQL } from 'drizzle-orm';
import { getTableConfig, index, integer, jsonb, text, timestamp, type PgSchema } from 'drizzle-orm/pg-core';
import type { RetentionRule } from '@sched/db';
import type { AnyPgDatabase } from './db-types';
import { assertEnvelope, type EventEnvelope } from './envelope';

/**
 * The publisher's outbox: events written in the same transaction as the state change
 * they describe, published later by the relay. Include it in the service's drizzle schema
 * file (`export const outbox = outboxTable(schema)`) so drizzle-kit generates it.
 */
export function outboxTable(schema: PgSchema) {
  return schema.table(
    'outbox',
    {
      /** The event id, so a row is enqueued at most once. */
      id: text('id').primaryKey(),
      type: text('type').notNull(),
      workspaceId: text('workspace_id').notNull(),
      payload: jsonb('payload').$type<EventEnvelope>().notNull(),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
      publishedAt: timestamp('published_at', { withTimezone: true }),
      attempts: integer('attempts').notNull().default(0),
      lastError: text('last_error'),
    },
    (t) => [
      // Partial: the relay only ever looks for unpublished rows, which stay few however large the table grows.
      index('outbox_unpublished_idx').on(t.createdAt).where(sql`published_at IS NULL`),
      // The retention job deletes published rows by age (outboxRetentionRule).
      index('outbox_published_idx').on(t.publishedAt).where(sql`published_at IS NOT NULL`),
    ],
  );
}

export type OutboxTable = ReturnType<typeof outboxTable>;

/**
 * Published outbox rows go `retentionMs` after they were published (docs/operations.md, "Retention":
 * 7 days by default). Unpublished rows are never pruned, however old: they are events still owed.
 */
export function outboxRetentionRule(table: OutboxTable, retentionMs: number): RetentionRule {
  return { table, ageColumn: table.publishedAt, retentionMs, where: sql`published_at IS NOT NULL` };
}

/** The NOTIFY channel of one schema's outbox: `<schema>_outbox`. */
export function outboxChannel(schemaName: string): string {
  return `${schemaName}_outbox`;
}

export function outboxSchemaName(table: OutboxTable): string {
  const schema = getTableConfig(table).schema;
  if (!schema) throw new Error('The outbox table must belong to a pgSchema (outboxTable(pgSchema("<service>")))');
  return schema;
}

/**
 * The outbox INSERT of one event, with the relay's NOTIFY riding on it (delivered only when the
 * caller commits). For a caller that folds it into a larger statement as a data-modifying WITH;
 * enqueueEvent runs it on its own.
 */
export function enqueueEventSql(table: OutboxTable, envelope: EventEnvelope): SQL {
  assertEnvelope(envelope);
  const notify = sql`pg_notify(${outboxChannel(outboxSchemaName(table))}, '')`;
  return sql`INSERT INTO ${table} (id, type, workspace_id, payload) SELECT ${envelope.id}, ${envelope.type}, ${envelope.workspace_id}, ${JSON.stringify(envelope)}::jsonb FROM (SELECT ${notify}) AS n`;
}

/**
 * Adds the event to the outbox inside the caller's transaction. The NOTIFY is
 * transactional too: Postgres delivers it only on commit, so the relay wakes up right
 * after the commit and never for a rolled-back event. One round trip.
 */
export async function enqueueEvent(tx: AnyPgDatabase, table: OutboxTable, envelope: EventEnvelope): Promise<void> {
  await tx.execute(enqueueEventSql(table, envelope));
}
