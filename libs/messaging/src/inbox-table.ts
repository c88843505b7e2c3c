import { index, text, timestamp, type PgSchema } from 'drizzle-orm/pg-core';
import type { RetentionRule } from '@sched/db';

/**
 * The consumer's inbox: one row per event already handled, written in the handler's own
 * transaction, so a redelivered event finds its row and is skipped. Include it in the
 * service's drizzle schema file (`export const inbox = inboxTable(schema)`) so drizzle-kit
 * generates it. One inbox per consuming queue: two consumers sharing one would skip each
 * other's events. Rows are pruned after a few weeks (inboxRetentionRule); redeliveries come much sooner.
 */
export function inboxTable(schema: PgSchema) {
  return schema.table(
    'inbox',
    {
      eventId: text('event_id').primaryKey(),
      type: text('type').notNull(),
      receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    },
    // The retention job deletes by age; without the index each run would scan the whole table.
    (t) => [index('inbox_received_idx').on(t.receivedAt)],
  );
}

export type InboxTable = ReturnType<typeof inboxTable>;

/**
 * Inbox rows go `retentionMs` after the event was handled (docs/operations.md, "Retention": 14 days by
 * default). A copy of an event arriving after that would be handled again, so the period must stay far
 * above any redelivery delay (the consumer's retries take under a minute).
 */
export function inboxRetentionRule(table: InboxTable, retentionMs: number): RetentionRule {
  return { table, ageColumn: table.receivedAt, retentionMs };
}
