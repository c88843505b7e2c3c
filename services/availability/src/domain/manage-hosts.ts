import { DomainError, newId, type CreateHostBody, type PatchHostBody, type PutScheduleBody } from '@sched/contracts';
import { toPage } from '@sched/pagination';
import { scheduleHasAvailability, type HostSchedule } from './availability-resolver';

export interface HostRecord {
  id: string;
  workspaceId: string;
  name: string;
  email: string;
  timezone: string;
  conferencingUrlTemplate: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ScheduleRecord extends HostSchedule {
  hostId: string;
  updatedAt: Date;
}

export interface HostPosition {
  createdAt: string;
  id: string;
}

export type HostChanges = Partial<Pick<HostRecord, 'name' | 'email' | 'timezone' | 'conferencingUrlTemplate'>>;

/** What the host use cases need from storage; implemented in store/. Every call is per workspace. */
export interface HostStore {
  /** Inserts the host with an empty schedule, in one transaction. */
  insertHost(row: Omit<HostRecord, 'createdAt' | 'updatedAt'>): Promise<HostRecord>;
  findHost(workspaceId: string, id: string): Promise<HostRecord | null>;
  updateHost(workspaceId: string, id: string, changes: HostChanges): Promise<HostRecord | null>;
  listHosts(workspaceId: string, after: HostPosition | null, limit: number): Promise<HostRecord[]>;
  findSchedule(workspaceId: string, hostId: string): Promise<ScheduleRecord | null>;
  replaceSchedule(workspaceId: string, hostId: string, schedule: HostSchedule & { hasAvailability: boolean }): Promise<ScheduleRecord | null>;
}

export async function createHost(store: HostStore, workspaceId: string, body: CreateHostBody): Promise<HostRecord> {
  return store.insertHost({
    id: newId('hst'),
    workspaceId,
    name: body.name,
    email: body.email,
    timezone: body.timezone,
    conferencingUrlTemplate: body.conferencing_url_template ?? null,
  });
}

export async function getHost(store: HostStore, workspaceId: string, id: string): Promise<HostRecord> {
  const host = await store.findHost(workspaceId, id);
  if (!host) throw new DomainError('not_found');
  return host;
}

export async function patchHost(store: HostStore, workspaceId: string, id: string, body: PatchHostBody): Promise<HostRecord> {
  const changes: HostChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.email !== undefined) changes.email = body.email;
  if (body.timezone !== undefined) changes.timezone = body.timezone;
  if (body.conferencing_url_template !== undefined) changes.conferencingUrlTemplate = body.conferencing_url_template;
  const host = await store.updateHost(workspaceId, id, changes);
  if (!host) throw new DomainError('not_found');
  return host;
}

export async function listHosts(
  store: HostStore,
  workspaceId: string,
  page: { after: HostPosition | null; limit: number },
): Promise<{ items: HostRecord[]; next: HostPosition | null }> {
  const rows = await store.listHosts(workspaceId, page.after, page.limit + 1);
  return toPage(rows, page.limit, (row) => ({ createdAt: row.createdAt.toISOString(), id: row.id }));
}

export async function getSchedule(store: HostStore, workspaceId: string, hostId: string): Promise<ScheduleRecord> {
  const schedule = await store.findSchedule(workspaceId, hostId);
  if (!schedule) throw new DomainError('not_found');
  return schedule;
}

/** Replaces the whole schedule (decisions.md §13); an override replaces its date's weekly intervals. */
export async function putSchedule(store: HostStore, workspaceId: string, hostId: string, body: PutScheduleBody): Promise<ScheduleRecord> {
  const schedule: HostSchedule = { weekly: body.weekly, overrides: [...body.overrides].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)) };
  const saved = await store.replaceSchedule(workspaceId, hostId, { ...schedule, hasAvailability: scheduleHasAvailability(schedule) });
  if (!saved) throw new DomainError('not_found');
  return saved;
}
