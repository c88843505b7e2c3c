
import { index, integer, pgSchema, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

export const gateway = pgSchema('gateway');

export const workspaces = gateway.table('workspaces', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Unique public name used in booking page URLs. */
  slug: text('slug').notNull().unique(),
  /** `live` or `test`: decides the `sk_live_` / `sk_test_` prefix of its keys. */
  mode: text('mode').notNull().default('live'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

export const apiKeys = gateway.table(
  'api_keys',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    name: text('name').notNull(),
    /** SHA-256 hex of the key; the key itself is never stored. */
    keyHash: text('key_hash').notNull().unique(),
    keyHint: text('key_hint').notNull(),
    scopes: text('scopes').array().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    rateLimit: integer('rate_limit'),
    rateWindowSeconds: integer('rate_window_seconds'),
  },
  (t) => [index('api_keys_workspace_idx').on(t.workspaceId, t.createdAt)],
);

/** One row per key and fixed window; shared by every gateway replica. Old windows are swept. */
export const rateLimitCounters = gateway.table(
  'rate_limit_counters',
  {
    keyId: text('key_id').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true, precision: 3 }).notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.windowStart] }), index('rate_limit_window_idx').on(t.windowStart)],
);

