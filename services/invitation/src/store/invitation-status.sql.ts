import { sql, type SQL } from 'drizzle-orm';
import type { InvitationStatus } from '@sched/contracts';
import { invitations as t } from './schema';

/**
 * The effective status (decisions.md §9; domain/invitation.ts effectiveStatus) as a SQL predicate at
 * `now`, so the list filter runs in the query and keyset pagination sees only matching rows. Each
 * predicate negates the states before it, exactly as "first match wins" does.
 */
export function statusPredicate(status: InvitationStatus, now: Date): SQL {
  const at = sql`${now.toISOString()}::timestamptz`;
  const notRevoked = sql`${t.revokedAt} IS NULL`;
  const notExhausted = sql`${t.usedCount} < ${t.maxUses}`;
  const notExpired = sql`${at} < ${t.expiresAt}`;
  switch (status) {
    case 'revoked':
      return sql`${t.revokedAt} IS NOT NULL`;
    case 'exhausted':
      return sql`(${notRevoked} AND ${t.usedCount} >= ${t.maxUses})`;
    case 'expired':
      return sql`(${notRevoked} AND ${notExhausted} AND ${at} >= ${t.expiresAt})`;
    case 'not_yet_valid':
      return sql`(${notRevoked} AND ${notExhausted} AND ${notExpired} AND ${t.notBefore} IS NOT NULL AND ${at} < ${t.notBefore})`;
    case 'active':
      return sql`(${notRevoked} AND ${notExhausted} AND ${notExpired} AND (${t.notBefore} IS NULL OR ${t.notBefore} <= ${at}))`;
  }
}
