import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import type { Invitation } from '../domain/invitation';
import type { InvitationStore } from '../domain/ports';
import { statusPredicate } from './invitation-status.sql';
import { invitations as t } from './schema';

type Conn = Db | DbTx;

/** Explicit columns: the credential hash never leaves the store. */
export const invitationColumns = {
  id: t.id,
  workspaceId: t.workspaceId,
  eventTypeId: t.eventTypeId,
  email: t.email,
  notBefore: t.notBefore,
  expiresAt: t.expiresAt,
  maxUses: t.maxUses,
  usedCount: t.usedCount,
  metadata: t.metadata,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  revokedAt: t.revokedAt,
};

function one(rows: Invitation[]): Invitation {
  const row = rows[0];
  if (!row) throw new Error('invitation row vanished inside its own transaction');
  return row;
}

/** The v1 store on one connection or transaction. */
export function createInvitationStore(db: Conn): InvitationStore {
  const byId = (ws: string, id: string) => and(eq(t.workspaceId, ws), eq(t.id, id));
  return {
    async insert(inv) {
      return one(await db.insert(t).values(inv).returning(invitationColumns));
    },
    async find(ws, id) {
      const [row] = await db.select(invitationColumns).from(t).where(byId(ws, id));
      return row ?? null;
    },
    async findForUpdate(ws, id) {
      const [row] = await db.select(invitationColumns).from(t).where(byId(ws, id)).for('update');
      return row ?? null;
    },
    async list(ws, q) {
      const where: SQL[] = [eq(t.workspaceId, ws)];
      if (q.eventTypeId !== undefined) where.push(eq(t.eventTypeId, q.eventTypeId));
      if (q.status !== undefined) where.push(statusPredicate(q.status, q.now));
      if (q.after) where.push(sql`(${t.createdAt}, ${t.id}) < (${q.after.createdAt.toISOString()}::timestamptz, ${q.after.id})`);
      return db
        .select(invitationColumns)
        .from(t)
        .where(and(...where))
        .orderBy(desc(t.createdAt), desc(t.id))
        .limit(q.limit);
    },
    async markRevoked(ws, id, now) {
      return one(await db.update(t).set({ revokedAt: now, updatedAt: now }).where(byId(ws, id)).returning(invitationColumns));
    },
    async replaceCredential(ws, id, credentialHash, now) {
      return one(await db.update(t).set({ credentialHash, updatedAt: now }).where(byId(ws, id)).returning(invitationColumns));
    },
  };
}
