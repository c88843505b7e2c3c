import { index, integer, json, text, timestamp, pgSchema } from 'drizzle-orm/pg-core';
import { eventRoutingKey } from '@sched/contracts';
import { outboxTable, inboxTable } from '@sched/messaging';
import { idempotencyTable } from '@sched/idempotency';

/** Everything this service stores lives in its own schema, readable only by its own login role. */
export const booking = pgSchema('booking');

/**
 * Events written in the same transaction as the change they announce; relayed to RabbitMQ, each with
 * the routing key eventRoutingKey gives it (booking.created says whether an invitation was involved).
 */
export const outbox = outboxTable(booking, { routingKey: eventRoutingKey });

/** Ids of consumed events, written with the handler's effect so a redelivery is skipped. */
export const inbox = inboxTable(booking);

/** Finished idempotent requests (decisions.md §4), written in the transaction of their mutation. */
export const idempotencyKeys = idempotencyTable(booking);

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * Bookings. Two confirmed Bookings of one host never overlap, buffers included: the exclusion constraint
 * `bookings_no_overlap` on (host_id, [blocked_from, blocked_to)) WHERE status = 'confirmed' lives in the
 * raw-SQL migration 0002 (drizzle cannot express it).
 */
export const bookings = booking.table(
  'bookings',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    status: text('status').notNull(),
    /** Counts API mutations only (create 1, +1 per reschedule/cancel); calendar updates leave it alone. */
    version: integer('version').notNull(),
    source: text('source').notNull(),
    /** The Booking Invitation whose credential made it (hosted booking page); internal, never in the v1 Booking. */
    invitationId: text('invitation_id'),
    eventTypeId: text('event_type_id').notNull(),
    hostId: text('host_id').notNull(),
    startAt: ts('start_at').notNull(),
    endAt: ts('end_at').notNull(),
    /** start − buffer_before and end + buffer_after, as the availability service reported them. */
    blockedFrom: ts('blocked_from').notNull(),
    blockedTo: ts('blocked_to').notNull(),
    guestName: text('guest_name').notNull(),
    guestEmail: text('guest_email').notNull(),
    guestTimezone: text('guest_timezone').notNull(),
    meetingType: text('meeting_type').notNull(),
    joinUrl: text('join_url'),
    calendarStatus: text('calendar_status').notNull(),
    calendarErrorCode: text('calendar_error_code'),
    /** When a calendar result first reported the event written; set once, so calendar.created is published once. */
    calendarWrittenAt: ts('calendar_written_at'),
    /** `json`, not `jsonb`: the caller's text is kept as sent (jsonb would reorder keys). */
    metadata: json('metadata').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    rescheduledAt: ts('rescheduled_at'),
    cancelledAt: ts('cancelled_at'),
  },
  (t) => [
    // The list: workspace, optional filters, keyset on (start_at, id).
    index('bookings_workspace_start_idx').on(t.workspaceId, t.startAt, t.id),
    index('bookings_workspace_event_type_start_idx').on(t.workspaceId, t.eventTypeId, t.startAt, t.id),
  ],
);

