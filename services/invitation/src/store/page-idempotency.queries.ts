import { and, eq, gt, sql } from 'drizzle-orm';
import type { Db } from '@sched/db';
import type { FoundIdempotencyRow } from '@sched/idempotency';
import { idempotencyKeys as k } from './schema';

/**
 * The live stored answer of a page booking key (row id from idempotencyRowIdentity), or null: the lookup
 * runIdempotent makes under its lock, made here before the page saga starts (libs/idempotency README,
 * "Running the protocol elsewhere").
 */
export async function findLivePageAnswer(db: Db, workspaceId: string, id: string): Promise<FoundIdempotencyRow | null> {
  const [row] = await db
    .select({ fingerprint: k.fingerprint, status: k.responseStatus, body: k.responseBody, sealed: k.sealed })
    .from(k)
    .where(and(eq(k.id, id), eq(k.workspaceId, workspaceId), gt(k.expiresAt, sql`now()`)));
  return row ?? null;
}
