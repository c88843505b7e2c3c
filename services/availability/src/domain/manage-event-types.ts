import { DomainError, newId, type CreateEventTypeBody, type PatchEventTypeBody } from '@sched/contracts';
import { toPage } from '@sched/pagination';
import type { EventTypeRecord, EventTypeView } from './event-type';

/** Keyset position of the Event Types list: the last row's (created_at, id). */
export interface EventTypePosition {
  createdAt: string;
  id: string;
}

export type EventTypeWrite = Omit<EventTypeRecord, 'id' | 'workspaceId' | 'hostId' | 'createdAt' | 'updatedAt'>;

/** What the Event Type use cases need from storage; implemented in store/. Every call is per workspace. */
export interface EventTypeStore {
  hostExists(workspaceId: string, hostId: string): Promise<boolean>;
  /** `slug_taken` when the workspace already has the slug (unique index, so also under races). */
  insertEventType(row: Omit<EventTypeRecord, 'createdAt' | 'updatedAt'>): Promise<EventTypeView | 'slug_taken'>;
  updateEventType(workspaceId: string, id: string, changes: Partial<EventTypeWrite>): Promise<EventTypeView | 'slug_taken' | null>;
  findEventType(workspaceId: string, id: string): Promise<EventTypeView | null>;
  findEventTypeBySlug(workspaceId: string, slug: string): Promise<EventTypeView | null>;
  /** `limit` rows after `after` in (created_at, id) order. */
  listEventTypes(workspaceId: string, after: EventTypePosition | null, limit: number): Promise<EventTypeView[]>;
}

const slugTaken = () => new DomainError('invalid_request', { message: 'The slug is already used in this workspace.', details: [{ field: 'slug', issue: 'taken' }] });

export async function createEventType(store: EventTypeStore, workspaceId: string, body: CreateEventTypeBody): Promise<EventTypeView> {
  if (!(await store.hostExists(workspaceId, body.host_id))) {
    throw new DomainError('invalid_reference', { message: 'The host does not exist in this workspace.', details: [{ field: 'host_id', issue: 'not_found' }] });
  }
  // A create body has every writable field (defaults filled in by the schema).
  const created = await store.insertEventType({ id: newId('evt'), workspaceId, hostId: body.host_id, ...(toWrite(body) as EventTypeWrite) });
  if (created === 'slug_taken') throw slugTaken();
  return created;
}

export async function patchEventType(store: EventTypeStore, workspaceId: string, id: string, body: PatchEventTypeBody): Promise<EventTypeView> {
  const updated = await store.updateEventType(workspaceId, id, toWrite(body));
  if (updated === null) throw new DomainError('not_found');
  if (updated === 'slug_taken') throw slugTaken();
  return updated;
}

export async function getEventType(store: EventTypeStore, workspaceId: string, id: string): Promise<EventTypeView> {
  const found = await store.findEventType(workspaceId, id);
  if (!found) throw new DomainError('not_found');
  return found;
}

/** The hosted booking page names Event Types by slug (/book/<workspace-slug>/<event-type-slug>). */
export async function getEventTypeBySlug(store: EventTypeStore, workspaceId: string, slug: string): Promise<EventTypeView> {
  const found = await store.findEventTypeBySlug(workspaceId, slug);
  if (!found) throw new DomainError('not_found');
  return found;
}

/** One page plus the position of its last row when another page exists. */
export async function listEventTypes(
  store: EventTypeStore,
  workspaceId: string,
  page: { after: EventTypePosition | null; limit: number },
): Promise<{ items: EventTypeView[]; next: EventTypePosition | null }> {
  const rows = await store.listEventTypes(workspaceId, page.after, page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ createdAt: row.createdAt.toISOString(), id: row.id }));
}

type WireFields = Partial<Omit<CreateEventTypeBody, 'host_id'>>;

/** Wire names → record names, only for the fields present (a PATCH changes only what it names). */
function toWrite(body: WireFields): Partial<EventTypeWrite> {
  const map: Array<[keyof WireFields, keyof EventTypeWrite]> = [
    ['name', 'name'],
    ['description', 'description'],
    ['slug', 'slug'],
    ['duration_minutes', 'durationMinutes'],
    ['slot_interval_minutes', 'slotIntervalMinutes'],
    ['buffer_before_minutes', 'bufferBeforeMinutes'],
    ['buffer_after_minutes', 'bufferAfterMinutes'],
    ['minimum_notice_minutes', 'minimumNoticeMinutes'],
    ['maximum_advance_minutes', 'maximumAdvanceMinutes'],
    ['meeting_type', 'meetingType'],
    ['status', 'status'],
    ['access', 'access'],
  ];
  const out: Record<string, unknown> = {};
  for (const [wire, field] of map) if (body[wire] !== undefined) out[field] = body[wire];
  return out as Partial<EventTypeWrite>;
}
