import { and, asc, eq, sql } from 'drizzle-orm';
import type { ScheduleOverride, WeeklySchedule } from '@sched/contracts';
import { PG, pgErrorCode, type Db, type DbTx } from '@sched/db';
import type { CalendarConnectionStatus, EventTypeRecord, EventTypeView } from '../domain/event-type';
import type { Buffers } from '../domain/booked-interval';
import type { SlotContext } from '../domain/find-slots';
import type { EventTypePosition, EventTypeStore, EventTypeWrite } from '../domain/manage-event-types';
import { runNamed, type NamedStatement, type StatementPool } from './prepared';
import { calendarConnections, eventTypes, hosts, schedules } from './schema';

const recordColumns = {
  id: eventTypes.id,
  workspaceId: eventTypes.workspaceId,
  hostId: eventTypes.hostId,
  name: eventTypes.name,
  description: eventTypes.description,
  slug: eventTypes.slug,
  durationMinutes: eventTypes.durationMinutes,
  slotIntervalMinutes: eventTypes.slotIntervalMinutes,
  bufferBeforeMinutes: eventTypes.bufferBeforeMinutes,
  bufferAfterMinutes: eventTypes.bufferAfterMinutes,
  minimumNoticeMinutes: eventTypes.minimumNoticeMinutes,
  maximumAdvanceMinutes: eventTypes.maximumAdvanceMinutes,
  meetingType: eventTypes.meetingType,
  status: eventTypes.status,
  access: eventTypes.access,
  createdAt: eventTypes.createdAt,
  updatedAt: eventTypes.updatedAt,
};

const viewColumns = {
  ...recordColumns,
  calendarStatus: calendarConnections.status,
  hostHasAvailability: sql<boolean>`coalesce(${schedules.hasAvailability}, false)`,
};

type ViewRow = { [K in keyof typeof viewColumns]: unknown } & { createdAt: Date; updatedAt: Date };

/** Text columns hold only values the contract schemas let in; the casts name them again for the domain. */
function toView(row: ViewRow): EventTypeView {
  return { ...(row as unknown as EventTypeRecord), calendarStatus: (row.calendarStatus as CalendarConnectionStatus | null) ?? null, hostHasAvailability: row.hostHasAvailability === true };
}

/** Event Types with their host's calendar state and schedule flag, always within one workspace. */
function selectViews(db: Db | DbTx) {
  return db
    .select(viewColumns)
    .from(eventTypes)
    .leftJoin(calendarConnections, and(eq(calendarConnections.hostId, eventTypes.hostId), eq(calendarConnections.workspaceId, eventTypes.workspaceId)))
    .leftJoin(schedules, and(eq(schedules.hostId, eventTypes.hostId), eq(schedules.workspaceId, eventTypes.workspaceId)));
}

function isSlugTaken(err: unknown): boolean {
  const cause = (err as { cause?: unknown }).cause;
  return pgErrorCode(err) === PG.uniqueViolation || pgErrorCode(cause) === PG.uniqueViolation;
}

export async function findEventType(db: Db | DbTx, workspaceId: string, id: string): Promise<EventTypeView | null> {
  const [row] = await selectViews(db)
    .where(and(eq(eventTypes.workspaceId, workspaceId), eq(eventTypes.id, id)))
    .limit(1);
  return row ? toView(row) : null;
}

export async function findEventTypeBySlug(db: Db, workspaceId: string, slug: string): Promise<EventTypeView | null> {
  const [row] = await selectViews(db)
    .where(and(eq(eventTypes.workspaceId, workspaceId), eq(eventTypes.slug, slug)))
    .limit(1);
  return row ? toView(row) : null;
}

export async function listEventTypes(db: Db, workspaceId: string, after: EventTypePosition | null, limit: number): Promise<EventTypeView[]> {
  const afterClause = after ? sql`(${eventTypes.createdAt}, ${eventTypes.id}) > (${new Date(after.createdAt)}, ${after.id})` : undefined;
  const rows = await selectViews(db)
    .where(and(eq(eventTypes.workspaceId, workspaceId), afterClause))
    .orderBy(asc(eventTypes.createdAt), asc(eventTypes.id))
    .limit(limit);
  return rows.map(toView);
}

export async function insertEventType(db: Db, row: Omit<EventTypeRecord, 'createdAt' | 'updatedAt'>): Promise<EventTypeView | 'slug_taken'> {
  try {
    await db.insert(eventTypes).values(row);
  } catch (err) {
    if (isSlugTaken(err)) return 'slug_taken';
    throw err;
  }
  return (await findEventType(db, row.workspaceId, row.id))!;
}

export async function updateEventType(db: Db, workspaceId: string, id: string, changes: Partial<EventTypeWrite>): Promise<EventTypeView | 'slug_taken' | null> {
  let updated: unknown[];
  try {
    updated = await db
      .update(eventTypes)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(eventTypes.workspaceId, workspaceId), eq(eventTypes.id, id)))
      .returning({ id: eventTypes.id });
  } catch (err) {
    if (isSlugTaken(err)) return 'slug_taken';
    throw err;
  }
  return updated.length === 0 ? null : findEventType(db, workspaceId, id);
}

export async function hostExists(db: Db, workspaceId: string, hostId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: hosts.id })
    .from(hosts)
    .where(and(eq(hosts.workspaceId, workspaceId), eq(hosts.id, hostId)))
    .limit(1);
  return row !== undefined;
}

/**
 * The Slots computation's and the slot check's read of an Event Type: the Event Type with its host's
 * calendar state and schedule flag (as selectViews), the host's zone and schedule. Primary-key lookups
 * joined on them, so its generic plan is the plan.
 */
export const SLOT_CONTEXT = {
  name: 'availability_slot_context',
  text: `
    SELECT e.id, e.workspace_id AS "workspaceId", e.host_id AS "hostId", e.name, e.description, e.slug,
           e.duration_minutes AS "durationMinutes", e.slot_interval_minutes AS "slotIntervalMinutes",
           e.buffer_before_minutes AS "bufferBeforeMinutes", e.buffer_after_minutes AS "bufferAfterMinutes",
           e.minimum_notice_minutes AS "minimumNoticeMinutes", e.maximum_advance_minutes AS "maximumAdvanceMinutes",
           e.meeting_type AS "meetingType", e.status, e.access, e.created_at AS "createdAt", e.updated_at AS "updatedAt",
           c.status AS "calendarStatus", coalesce(s.has_availability, false) AS "hostHasAvailability",
           h.timezone AS "hostTimezone", s.weekly, s.overrides
    FROM availability.event_types e
    JOIN availability.hosts h ON h.id = e.host_id AND h.workspace_id = e.workspace_id
    LEFT JOIN availability.calendar_connections c ON c.host_id = e.host_id AND c.workspace_id = e.workspace_id
    LEFT JOIN availability.schedules s ON s.host_id = e.host_id AND s.workspace_id = e.workspace_id
    WHERE e.workspace_id = $1 AND e.id = $2
    LIMIT 1`,
} as const satisfies NamedStatement;

type SlotContextRow = EventTypeView & { hostTimezone: string; weekly: WeeklySchedule | null; overrides: ScheduleOverride[] | null };

/** One round trip, a named statement on the statement pool: everything a Slots query or a slot check reads first. */
export async function loadSlotContext(pool: StatementPool, workspaceId: string, eventTypeId: string): Promise<SlotContext | null> {
  const [row] = await runNamed<SlotContextRow>(pool, SLOT_CONTEXT, [workspaceId, eventTypeId]);
  if (!row) return null;
  const { hostTimezone, weekly, overrides, ...eventType } = row;
  return { eventType, hostTimezone, schedule: { weekly: weekly ?? {}, overrides: overrides ?? [] } };
}

/** Buffers of an Event Type, for booking events that do not carry their blocked range. */
export async function findBuffers(db: Db | DbTx, workspaceId: string, eventTypeId: string): Promise<Buffers | null> {
  const [row] = await db
    .select({ beforeMinutes: eventTypes.bufferBeforeMinutes, afterMinutes: eventTypes.bufferAfterMinutes })
    .from(eventTypes)
    .where(and(eq(eventTypes.workspaceId, workspaceId), eq(eventTypes.id, eventTypeId)))
    .limit(1);
  return row ?? null;
}

export function createEventTypeStore(db: Db): EventTypeStore {
  return {
    hostExists: (ws, hostId) => hostExists(db, ws, hostId),
    insertEventType: (row) => insertEventType(db, row),
    updateEventType: (ws, id, changes) => updateEventType(db, ws, id, changes),
    findEventType: (ws, id) => findEventType(db, ws, id),
    findEventTypeBySlug: (ws, slug) => findEventTypeBySlug(db, ws, slug),
    listEventTypes: (ws, after, limit) => listEventTypes(db, ws, after, limit),
  };
}
