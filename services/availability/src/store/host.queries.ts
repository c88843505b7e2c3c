import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '@sched/db';
import type { HostPosition, HostRecord, HostStore, ScheduleRecord } from '../domain/manage-hosts';
import { hosts, schedules } from './schema';

const hostColumns = {
  id: hosts.id,
  workspaceId: hosts.workspaceId,
  name: hosts.name,
  email: hosts.email,
  timezone: hosts.timezone,
  conferencingUrlTemplate: hosts.conferencingUrlTemplate,
  createdAt: hosts.createdAt,
  updatedAt: hosts.updatedAt,
};

const scheduleColumns = { hostId: schedules.hostId, weekly: schedules.weekly, overrides: schedules.overrides, updatedAt: schedules.updatedAt };

export async function insertHost(db: Db, row: Omit<HostRecord, 'createdAt' | 'updatedAt'>): Promise<HostRecord> {
  return db.transaction(async (tx) => {
    const [host] = await tx.insert(hosts).values(row).returning(hostColumns);
    await tx.insert(schedules).values({ hostId: row.id, workspaceId: row.workspaceId, weekly: {}, overrides: [], hasAvailability: false });
    return host!;
  });
}

export async function findHost(db: Db, workspaceId: string, id: string): Promise<HostRecord | null> {
  const [row] = await db
    .select(hostColumns)
    .from(hosts)
    .where(and(eq(hosts.workspaceId, workspaceId), eq(hosts.id, id)))
    .limit(1);
  return row ?? null;
}

export async function updateHost(db: Db, workspaceId: string, id: string, changes: Partial<HostRecord>): Promise<HostRecord | null> {
  const [row] = await db
    .update(hosts)
    .set({ ...changes, updatedAt: new Date() })
    .where(and(eq(hosts.workspaceId, workspaceId), eq(hosts.id, id)))
    .returning(hostColumns);
  return row ?? null;
}

export async function listHosts(db: Db, workspaceId: string, after: HostPosition | null, limit: number): Promise<HostRecord[]> {
  const afterClause = after ? sql`(${hosts.createdAt}, ${hosts.id}) > (${new Date(after.createdAt)}, ${after.id})` : undefined;
  return db
    .select(hostColumns)
    .from(hosts)
    .where(and(eq(hosts.workspaceId, workspaceId), afterClause))
    .orderBy(asc(hosts.createdAt), asc(hosts.id))
    .limit(limit);
}

export async function findSchedule(db: Db, workspaceId: string, hostId: string): Promise<ScheduleRecord | null> {
  const [row] = await db
    .select(scheduleColumns)
    .from(schedules)
    .where(and(eq(schedules.workspaceId, workspaceId), eq(schedules.hostId, hostId)))
    .limit(1);
  return row ?? null;
}

export async function replaceSchedule(
  db: Db,
  workspaceId: string,
  hostId: string,
  schedule: Pick<ScheduleRecord, 'weekly' | 'overrides'> & { hasAvailability: boolean },
): Promise<ScheduleRecord | null> {
  const [row] = await db
    .update(schedules)
    .set({ weekly: schedule.weekly, overrides: [...schedule.overrides], hasAvailability: schedule.hasAvailability, updatedAt: new Date() })
    .where(and(eq(schedules.workspaceId, workspaceId), eq(schedules.hostId, hostId)))
    .returning(scheduleColumns);
  return row ?? null;
}

export function createHostStore(db: Db): HostStore {
  return {
    insertHost: (row) => insertHost(db, row),
    findHost: (ws, id) => findHost(db, ws, id),
    updateHost: (ws, id, changes) => updateHost(db, ws, id, changes),
    listHosts: (ws, after, limit) => listHosts(db, ws, after, limit),
    findSchedule: (ws, hostId) => findSchedule(db, ws, hostId),
    replaceSchedule: (ws, hostId, schedule) => replaceSchedule(db, ws, hostId, schedule),
  };
}
