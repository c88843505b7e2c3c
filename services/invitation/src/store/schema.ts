import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgSchema, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { idempotencyTable } from '@sched/idempotency';
import { outboxTable, inboxTable } from '@sched/messaging';

/** Everything this service stores lives in its own schema, readable only by its own login role. */
export const invitation = pgSchema('invitation');

/** Events written in the same transaction as the change they announce; relayed to RabbitMQ. */
export const outbox = outboxTable(invitation);

/** Ids of consumed events, written with the handler's effect so a redelivery is skipped. */
export const inbox = inboxTable(invitation);

/** Finished idempotent POSTs (decisions.md §4); answers carrying an invitation_url are sealed. */
export const idempotencyKeys = idempotencyTable(invitation);

// Millisecond precision: the API shows milliseconds, and keyset cursors compare the stored value exactly.
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

export const invitations = invitation.table(
  'invitations',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    eventTypeId: text('event_type_id').notNull(),
    email: text('email'),
    notBefore: ts('not_before'),
    expiresAt: ts('expires_at').notNull(),
    maxUses: integer('max_uses').notNull(),
    usedCount: integer('used_count').notNull().default(0),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
    /** SHA-256 (hex) of the current credential; the credential itself is never stored. Reissue replaces it. */
    credentialHash: text('credential_hash').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    uniqueIndex('invitations_credential_hash_idx').on(t.credentialHash),
    index('invitations_list_idx').on(t.workspaceId, t.createdAt.desc(), t.id.desc()),
    // decisions.md §9: used_count never exceeds max_uses, whatever the code path.
    check('invitations_used_count_bounds', sql`${t.usedCount} >= 0 AND ${t.usedCount} <= ${t.maxUses}`),
  ],
);

/**
 * One row per attempt to book with a credential: the use is held while `pending` (until expires_at),
 * counted when `confirmed`, given back when `released`. See docs/invitation.md "Use saga".
 */
export const useReservations = invitation.table(
  'use_reservations',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    invitationId: text('invitation_id').notNull(),
    status: text('status').$type<'pending' | 'confirmed' | 'released'>().notNull(),
    startAt: ts('start_at').notNull(),
    guestEmail: text('guest_email').notNull(),
    bookingId: text('booking_id'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull(),
    settledAt: ts('settled_at'),
  },
  (t) => [
    index('use_reservations_invitation_idx').on(t.workspaceId, t.invitationId, t.status),
    // One Booking confirms at most one reservation, so the HTTP path and the event path cannot both count it.
    uniqueIndex('use_reservations_booking_idx').on(t.bookingId),
  ],
);
