import { sql } from 'drizzle-orm';
import { bigserial, boolean, check, index, integer, pgSchema, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { inboxTable } from '@sched/messaging';

/** Everything this service stores lives in its own schema, readable only by its own login role. */
export const webhookDispatch = pgSchema('webhook_dispatch');

/** Ids of consumed events, written with the handler's effect so a redelivery is skipped. */
export const inbox = inboxTable(webhookDispatch);

// Millisecond precision: keyset cursors carry JavaScript Dates, which have no microseconds.
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/** Receivers registered by a workspace admin. */
export const endpoints = webhookDispatch.table(
  'endpoints',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    /** `admin` or `gone` (the receiver answered 410); null while enabled. */
    disabledReason: text('disabled_reason'),
    /** The signing secret, sealed with SECRETS_KEY (AES-256-GCM, bound to the endpoint id). */
    secretSealed: text('secret_sealed').notNull(),
    /** The secret before the last rotation; it keeps signing until previous_secret_expires_at. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('endpoints_workspace_idx').on(t.workspaceId, t.createdAt, t.id)],
);

/** One event to one endpoint. `body` is the exact bytes signed and sent on every attempt. */
export const deliveries = webhookDispatch.table(
  'deliveries',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => endpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    body: text('body').notNull(),
    status: text('status').notNull().default('pending'),
    /** Attempts over the delivery's whole life (replays included). */
    attemptCount: integer('attempt_count').notNull().default(0),
    /** Attempts since creation or the last replay: what the retry schedule counts. */
    roundAttempts: integer('round_attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    /** Lease of the replica sending it; a crashed replica's claim expires and another takes it. */
    lockedUntil: ts('locked_until'),
    claimToken: text('claim_token'),
    lastAttemptAt: ts('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    /** How many times it was dead-lettered; part of the DLQ message id, so each dead-lettering replays once. */
    deadLetterCount: integer('dead_letter_count').notNull().default(0),
    /** Failed, and its DLQ message not yet confirmed by the broker. */
    deadLetterPending: boolean('dead_letter_pending').notNull().default(false),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    succeededAt: ts('succeeded_at'),
    failedAt: ts('failed_at'),
  },
  (t) => [
    uniqueIndex('deliveries_endpoint_event_idx').on(t.endpointId, t.eventId),
    // The worker only ever looks at pending rows, which stay few however large the table grows.
    index('deliveries_due_idx').on(t.endpointId, t.nextAttemptAt).where(sql`status = 'pending'`),
    index('deliveries_dead_letter_pending_idx').on(t.id).where(sql`dead_letter_pending`),
    index('deliveries_list_idx').on(t.workspaceId, t.createdAt, t.id),
    index('deliveries_endpoint_list_idx').on(t.workspaceId, t.endpointId, t.createdAt, t.id),
    // The retention job (store/retention.ts) deletes finished deliveries by the time they finished.
    index('deliveries_succeeded_idx').on(t.succeededAt).where(sql`status = 'succeeded'`),
    index('deliveries_failed_idx').on(t.failedAt).where(sql`status = 'failed'`),
    check('deliveries_status_check', sql`status IN ('pending', 'succeeded', 'failed')`),
  ],
);

/** Every HTTP attempt, kept for the admin API as long as its delivery (pruned with it). */
export const attempts = webhookDispatch.table(
  'attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => deliveries.id, { onDelete: 'cascade' }),
    number: integer('number').notNull(),
    attemptedAt: ts('attempted_at').notNull(),
    statusCode: integer('status_code'),
    latencyMs: integer('latency_ms').notNull(),
    errorKind: text('error_kind'),
    error: text('error'),
  },
  (t) => [index('attempts_delivery_idx').on(t.deliveryId, t.number)],
);
