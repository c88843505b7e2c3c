import { index, integer, text, timestamp, boolean, type PgSchema } from 'drizzle-orm/pg-core';

/**
 * One row per finished idempotent request (decisions.md §4). Include it in the owning service's drizzle
 * schema (`export const idempotencyKeys = idempotencyTable(schema)`) so drizzle-kit generates it, the same
 * way as outboxTable. Rows are only ever written in the transaction of the mutation they describe, so a
 * row exists exactly when the mutation committed.
 */
export function idempotencyTable(schema: PgSchema) {
  return schema.table(
    'idempotency_keys',
    {
      /** sha256 (hex) of workspace, API key, method, path and the key: the scope of decisions.md §4. */
      id: text('id').primaryKey(),
      workspaceId: text('workspace_id').notNull(),
      /** sha256 (hex) of method, path and the canonical JSON body. */
      fingerprint: text('fingerprint').notNull(),
      responseStatus: integer('response_status').notNull(),
      /** The response envelope as JSON text, or its SecretBox-sealed form when `sealed`. */
      responseBody: text('response_body').notNull(),
      sealed: boolean('sealed').notNull().default(false),
      createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
      expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    },
    // The cleanup job deletes by expiry; without the index each run would scan the whole table.
    (t) => [index('idempotency_keys_expires_idx').on(t.expiresAt)],
  );
}

export type IdempotencyTable = ReturnType<typeof idempotencyTable>;
