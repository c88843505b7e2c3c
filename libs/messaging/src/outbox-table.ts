import { sql, type SQL } from 'drizzle-orm';
import { getTableConfig, index, integer, jsonb, text, timestamp, type PgSchema } from 'drizzle-orm/pg-core';
import type { RetentionRule } from '@sched/db';
import { qualifiedTableName, type AnyPgDatabase } from './db-types';
import { assertEnvelope, type EventEnvelope } from './envelope';

/**
 * The routing key an event is published with: its `type`, or the type followed by qualifiers that let
 * consumers select fewer events of that type (README "Routing keys"), e.g. `booking.created.invitation`.
 */
export type RoutingKeyRule = (envelope: EventEnvelope) => string;

export interface OutboxTableOptions {
  /**
   * How the relay routes this outbox's events; default: by type. Read at publish time, so rows written
   * before a rule existed (or by SQL that never saw it) are routed by it too.
   */
  routingKey?: RoutingKeyRule;
}

const routingRules = new WeakMap<object, RoutingKeyRule>();

/**
 * The publisher's outbox: events written in the same transaction as the state change
 * they describe, published later by the relay. Include it in the service's drizzle schema
 * file (`export const outbox = outboxTable(schema)`) so drizzle-kit generates it. The options
 * are the publisher's, not columns: the table is the same with or without them.
 */
export function outboxTable(schema: PgSchema, opts: OutboxTableOptions = {}) {
  const table = schema.table(
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
  if (opts.routingKey) routingRules.set(table, opts.routingKey);
  return table;
}

/** The routing rule the outbox was declared with (outboxTable's `routingKey`), if any. */
export function outboxRoutingKeyRule(table: object): RoutingKeyRule | undefined {
  return routingRules.get(table);
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
 * The payload of the relay's NOTIFY: the ids of the rows it announces, as a JSON array of strings
 * (`["<event id>", ...]`), so the relay claims exactly those rows by primary key. An empty payload (or one
 * it cannot read, or one that would not fit a NOTIFY's 8000 bytes) means "look for unpublished rows":
 * the relay then runs its claim over the index of unpublished rows. SQL writers build the same text with
 * `json_agg(id)::text` / `json_build_array(id)::text`.
 */
export function outboxNotifyPayload(ids: readonly string[]): string {
  const payload = JSON.stringify(ids);
  return Buffer.byteLength(payload) < MAX_NOTIFY_PAYLOAD_BYTES ? payload : '';
}

/** Postgres refuses a NOTIFY payload of 8000 bytes or more. */
export const MAX_NOTIFY_PAYLOAD_BYTES = 8000;

/** The ids a NOTIFY payload names (outboxNotifyPayload), or undefined when it says "look" ('' or unreadable). */
export function parseOutboxNotifyPayload(payload: string): string[] | undefined {
  if (payload === '') return undefined;
  try {
    const value: unknown = JSON.parse(payload);
    if (Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'string' && id.length > 0)) return value as string[];
  } catch {
    // not ours: look
  }
  return undefined;
}

/**
 * An outbox table's quoted name and NOTIFY channel, worked out once per table: getTableConfig describes the
 * whole table on each call, and an event is enqueued per change.
 */
const names = new WeakMap<OutboxTable, { table: SQL; channel: string }>();
function namesOf(table: OutboxTable): { table: SQL; channel: string } {
  let n = names.get(table);
  if (n === undefined) {
    n = { table: sql.raw(qualifiedTableName(table)), channel: outboxChannel(outboxSchemaName(table)) };
    names.set(table, n);
  }
  return n;
}

/**
 * The outbox INSERT of one event, with the relay's NOTIFY riding on it (delivered only when the
 * caller commits), naming the event's id. For a caller that folds it into a larger statement as a
 * data-modifying WITH; enqueueEvent runs it on its own.
 */
export function enqueueEventSql(table: OutboxTable, envelope: EventEnvelope): SQL {
  assertEnvelope(envelope);
  const n = namesOf(table);
  const notify = sql`pg_notify(${n.channel}, ${outboxNotifyPayload([envelope.id])})`;
  return sql`INSERT INTO ${n.table} (id, type, workspace_id, payload) SELECT ${envelope.id}, ${envelope.type}, ${envelope.workspace_id}, ${JSON.stringify(envelope)}::jsonb FROM (SELECT ${notify}) AS n`;
}

/**
 * Adds the event to the outbox inside the caller's transaction. The NOTIFY is
 * transactional too: Postgres delivers it only on commit, so the relay wakes up right
 * after the commit (and claims this row by its id) and never for a rolled-back event. One round trip.
 */
export async function enqueueEvent(tx: AnyPgDatabase, table: OutboxTable, envelope: EventEnvelope): Promise<void> {
  await tx.execute(enqueueEventSql(table, envelope));
}
