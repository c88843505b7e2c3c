import { DomainError, type Scope } from '@sched/contracts';

/** What the gateway knows of a key after looking up its hash. */
export interface KeyRecord {
  id: string;
  workspaceId: string;
  scopes: readonly string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  rateLimit: { limit: number; windowSeconds: number } | null;
}

/** A key that is unknown, revoked or expired is one answer: 401 (decisions.md §2, no hint which). */
export function authenticate(record: KeyRecord | null, now: Date): KeyRecord {
  if (!record) throw new DomainError('unauthenticated');
  if (record.revokedAt && record.revokedAt.getTime() <= now.getTime()) throw new DomainError('unauthenticated');
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) throw new DomainError('unauthenticated');
  return record;
}

export function requireScope(record: KeyRecord, scope: Scope): void {
  if (!record.scopes.includes(scope)) {
    throw new DomainError('insufficient_scope', { details: [{ field: 'scope', issue: scope }] });
  }
}
