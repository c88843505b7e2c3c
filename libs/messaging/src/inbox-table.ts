import { text, timestamp, type PgSchema } from 'drizzle-orm/pg-core';

/**
 * The consumer's inbox: one row per event already handled, written in the handler's own
 * transaction, so a redelivered event finds its row and is skipped. Include it in the
 * service's drizzle schema file (`export const inbox = inboxTable(schema)`) so drizzle-kit
 * generates it. One inbox per consuming queue: two consumers sharing one would skip each
 * other's events. Rows can be pruned after a few weeks; redeliveries come much sooner.
 */
export function inboxTable(schema: PgSchema) {
  return schema.table('inbox', {
    eventId: text('event_id').primaryKey(),
    type: text('type').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  });
}

export type InboxTable = ReturnType<typeof inboxTable>;
