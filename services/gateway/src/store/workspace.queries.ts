import { eq } from 'drizzle-orm';
import type { Db } from '@sched/db';
import type { Workspace } from '../domain/workspace-admin';
import { workspaces } from './schema';


export type WorkspaceRow = Workspace;

const columns = { id: workspaces.id, name: workspaces.name, slug: workspaces.slug, mode: workspaces.mode, createdAt: workspaces.createdAt };

/** Null when the slug is taken (unique violation), so the caller can answer 409 or pick another. */
export async function insertWorkspace(db: Db, p: { id: string; name: string; slug: string; mode: 'live' | 'test' }): Promise<WorkspaceRow | null> {
  const rows = await db.insert(workspaces).values(p).onConflictDoNothing({ target: workspaces.slug }).returning(columns);
  return (rows[0] as WorkspaceRow | undefined) ?? null;
}

export async function findWorkspaceBySlug(db: Db, slug: string): Promise<WorkspaceRow | null> {
  const [row] = await db.select(columns).from(workspaces).where(eq(workspaces.slug, slug)).limit(1);
  return (row as WorkspaceRow | undefined) ?? null;
}

export async function findWorkspace(db: Db, id: string): Promise<WorkspaceRow | null> {
  const [row] = await db.select(columns).from(workspaces).where(eq(workspaces.id, id)).limit(1);
  return (row as WorkspaceRow | undefined) ?? null;
}
