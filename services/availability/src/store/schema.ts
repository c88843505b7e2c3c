import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgSchema, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { EVENT_TYPE_LIMITS, type ScheduleOverride, type WeeklySchedule } from '@sched/contracts';
import { inboxTable } from '@sched/messaging';

/** Everything this service stores lives in its own schema, readable only by its own login role. */
export const availability = pgSchema('availability');

/** Ids of consumed events, written with the handler's effect so a redelivery is skipped. */
export const inbox = inboxTable(availability);

// Millisecond precision, like every timestamp on the wire: a value read back equals what was written.
const instant = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });

export const hosts = availability.table(
  'hosts',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    timezone: text('timezone').notNull(),
    conferencingUrlTemplate: text('conferencing_url_template'),
    createdAt: instant('created_at').notNull().defaultNow(),
    updatedAt: instant('updated_at').notNull().defaultNow(),
  },
  (t) => [index('hosts_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id)],
);

/** One row per host, made with the host (empty), replaced whole by PUT .../schedule. */
export const schedules = availability.table('schedules', {
  hostId: text('host_id')
    .primaryKey()
    .references(() => hosts.id),
  workspaceId: text('workspace_id').notNull(),
  weekly: jsonb('weekly').$type<WeeklySchedule>().notNull(),
  overrides: jsonb('overrides').$type<ScheduleOverride[]>().notNull(),
  /** Kept with the schedule so `bookable` of a whole page of Event Types needs no JSON walking. */
  hasAvailability: boolean('has_availability').notNull(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

export const eventTypes = availability.table(
  'event_types',
  {
    id: text('id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    hostId: text('host_id')
      .notNull()
      .references(() => hosts.id),
    name: text('name').notNull(),
    description: text('description'),
    slug: text('slug').notNull(),
    durationMinutes: integer('duration_minutes').notNull(),
    slotIntervalMinutes: integer('slot_interval_minutes').notNull(),
    bufferBeforeMinutes: integer('buffer_before_minutes').notNull(),
    bufferAfterMinutes: integer('buffer_after_minutes').notNull(),
    minimumNoticeMinutes: integer('minimum_notice_minutes').notNull(),
    maximumAdvanceMinutes: integer('maximum_advance_minutes').notNull(),
    meetingType: text('meeting_type').notNull(),
    status: text('status').notNull(),
    access: text('access').notNull(),
    createdAt: instant('created_at').notNull().defaultNow(),
    updatedAt: instant('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('event_types_workspace_slug_uq').on(t.workspaceId, t.slug),
    // Keyset pagination of GET /v1/event-types: (created_at, id) ascending within a workspace.
    index('event_types_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id),
  ],
);

/**
 * Projection of calendar.connection_updated: the latest known state of each host's calendar
 * connection. `event_at` is the occurred_at of the event applied, so an older event arriving late
 * never overwrites a newer one. No row = never connected.
 */
export const calendarConnections = availability.table('calendar_connections', {
  hostId: text('host_id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
  status: text('status').notNull(),
  errorCode: text('error_code'),
  eventAt: instant('event_at').notNull(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

/**
 * The longest blocked range the contract lets a Booking have, in hours: duration (at most 1,440 minutes)
 * plus both buffers (at most 1,440 minutes each), EVENT_TYPE_LIMITS, so 72. The booked-interval read
 * scans blocked_from from this far before its window; a longer range (an older contract, a hand-written
 * row) is still found, through booked_intervals_host_long_idx, which holds only those. Changing it
 * changes that index's predicate: generate a migration (`pnpm db:generate availability <name>`).
 */
export const LONGEST_BLOCKED_HOURS = (EVENT_TYPE_LIMITS.durationMax + 2 * EVENT_TYPE_LIMITS.bufferMax) / 60;

/**
 * Projection of booking.created / rescheduled / cancelled: the blocked range of every Booking at its
 * highest version seen. Cancelled Bookings stay as tombstones (status `cancelled`) so that a late,
 * older event cannot bring them back.
 */
export const bookedIntervals = availability.table(
  'booked_intervals',
  {
    bookingId: text('booking_id').primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    hostId: text('host_id').notNull(),
    eventTypeId: text('event_type_id').notNull(),
    version: integer('version').notNull(),
    status: text('status').notNull(),
    startAt: instant('start_at').notNull(),
    endAt: instant('end_at').notNull(),
    blockedFrom: instant('blocked_from').notNull(),
    blockedTo: instant('blocked_to').notNull(),
    updatedAt: instant('updated_at').notNull().defaultNow(),
  },
  // The overlap read (store/projection.queries.ts, BOOKED_OVERLAPPING) is a range scan over blocked_from:
  // a range overlapping [from, to) starts in (from − LONGEST_BLOCKED_HOURS, to) unless it is longer than
  // that, and the few longer ones (none within the contract's limits) are in the second, partial index.
  // blocked_to is a key column of the first so the scan tests `blocked_to > from` on index entries, not rows.
  (t) => [
    index('booked_intervals_host_from_idx').on(t.workspaceId, t.hostId, t.blockedFrom, t.blockedTo).where(sql`status = 'confirmed'`),
    index('booked_intervals_host_long_idx')
      .on(t.workspaceId, t.hostId, t.blockedTo)
      .where(sql.raw(`status = 'confirmed' AND blocked_to - blocked_from > interval '${LONGEST_BLOCKED_HOURS} hours'`)),
  ],
);
