import { createHash, randomBytes } from 'node:crypto';
import type { InvitationStatus } from '@sched/contracts';

/** A Booking Invitation as the store returns it (no credential: only its hash is stored, and never read back out). */
export interface Invitation {
  id: string;
  workspaceId: string;
  eventTypeId: string;
  email: string | null;
  notBefore: Date | null;
  expiresAt: Date;
  maxUses: number;
  usedCount: number;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  revokedAt: Date | null;
}

/**
 * decisions.md §9, first match wins: revoked → exhausted → expired → not_yet_valid → active.
 * Derived at read time, never stored, so time alone moves an invitation between states. The same
 * rule is written in SQL for the list filter (store/invitation-status.sql.ts); keep them together.
 */
export function effectiveStatus(inv: Pick<Invitation, 'revokedAt' | 'usedCount' | 'maxUses' | 'expiresAt' | 'notBefore'>, now: Date): InvitationStatus {
  if (inv.revokedAt) return 'revoked';
  if (inv.usedCount >= inv.maxUses) return 'exhausted';
  if (now.getTime() >= inv.expiresAt.getTime()) return 'expired';
  if (inv.notBefore && now.getTime() < inv.notBefore.getTime()) return 'not_yet_valid';
  return 'active';
}

/** 32 random bytes (256 bits, decisions.md §9 asks for at least 128), URL-safe: the one-time credential. */
export function newCredential(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored and looked up: a fast hash suffices because the credential itself has 256 random bits. */
export function hashCredential(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('hex');
}

/** Shape of a credential made by newCredential; anything else is not looked up at all. */
export function isCredentialShaped(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** `{BOOKING_PAGE_URL}/i/<credential>` (decisions.md §9). */
export function invitationUrl(bookingPageUrl: string, credential: string): string {
  return `${bookingPageUrl.replace(/\/+$/, '')}/i/${credential}`;
}

/** A reservation id: the Idempotency-Key of the booking call it guards, so it must be unguessable and unique. */
export function newReservationId(): string {
  return `rsv_${randomBytes(16).toString('base64url')}`;
}

export function sameEmail(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
