import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Db } from '@sched/db';
import type { KeyRecord } from '../domain/authorize';
import type { ApiKey } from '../domain/workspace-admin';
import { apiKeys } from './schema';

/** Rows are returned as the domain's ApiKey: the store adds no fields of its own. */
export type ApiKeyRow = ApiKey;

const columns = {
  id: apiKeys.id,
  workspaceId: apiKeys.workspaceId,
  name: apiKeys.name,
  keyHint: apiKeys.keyHint,
  scopes: apiKeys.scopes,
  createdAt: apiKeys.createdAt,
  expiresAt: apiKeys.expiresAt,
  revokedAt: apiKeys.revokedAt,
  rateLimit: apiKeys.rateLimit,
  rateWindowSeconds: apiKeys.rateWindowSeconds,
};

export async function insertApiKey(
  db: Db,
  p: Omit<ApiKeyRow, 'createdAt' | 'revokedAt'> & { keyHash: string },
): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(p).returning(columns);
  return row!;
}

export async function listApiKeys(db: Db, workspaceId: string): Promise<ApiKeyRow[]> {
  return db.select(columns).from(apiKeys).where(eq(apiKeys.workspaceId, workspaceId)).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

/** Sets revoked_at once; a second revoke keeps the first time. Null when the key is not in this workspace. */
export async function revokeApiKey(db: Db, workspaceId: string, id: string, now: Date): Promise<ApiKeyRow | null> {
  await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.workspaceId, workspaceId), eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
  const [row] = await db.select(columns).from(apiKeys).where(and(eq(apiKeys.workspaceId, workspaceId), eq(apiKeys.id, id)));
  return row ?? null;
}

export async function findKeyByHash(db: Db, keyHash: string): Promise<(KeyRecord & { keyHash: string }) | null> {
  const [row] = await db
    .select({ ...columns, keyHash: apiKeys.keyHash })
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, keyHash))
    .limit(1);
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    keyHash: row.keyHash,
    rateLimit: row.rateLimit && row.rateWindowSeconds ? { limit: row.rateLimit, windowSeconds: row.rateWindowSeconds } : null,
  };
}
