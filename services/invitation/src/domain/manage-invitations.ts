import { DomainError, invitationTimeIssues, newId, type CreateBookingInvitationBody, type InvitationStatus } from '@sched/contracts';
import { effectiveStatus, hashCredential, invitationUrl, newCredential, type Invitation } from './invitation';
import type { EventTypeDirectory, InvitationStore, ListPosition } from './ports';

export interface InvitationDeps {
  store: InvitationStore;
  eventTypes: EventTypeDirectory;
  bookingPageUrl: string;
}

export interface InvitationWithUrl {
  invitation: Invitation;
  url: string;
}

/**
 * decisions.md §9: only an `invitation_only` Event Type of this workspace (else 422 invalid_reference),
 * `expires_at` in the future (400; after not_before is checked by the body schema). The credential is
 * returned once, here, inside the URL; only its hash is stored.
 */
export async function createInvitation(deps: InvitationDeps, workspaceId: string, body: CreateBookingInvitationBody, now: Date): Promise<InvitationWithUrl> {
  const timeIssues = invitationTimeIssues(body, now);
  if (timeIssues.length > 0) throw new DomainError('invalid_request', { details: timeIssues });
  const eventType = await deps.eventTypes.find(workspaceId, body.event_type_id);
  if (!eventType || eventType.access !== 'invitation_only') {
    throw new DomainError('invalid_reference', {
      message: 'event_type_id must name an invitation-only Event Type of this workspace.',
      details: [{ field: 'event_type_id', issue: eventType ? 'not_invitation_only' : 'not_found' }],
    });
  }
  const credential = newCredential();
  const invitation = await deps.store.insert({
    id: newId('biv'),
    workspaceId,
    eventTypeId: eventType.id,
    email: body.email ?? null,
    notBefore: body.not_before ?? null,
    expiresAt: body.expires_at,
    maxUses: body.max_uses,
    usedCount: 0,
    metadata: body.metadata ?? {},
    credentialHash: hashCredential(credential),
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
  });
  return { invitation, url: invitationUrl(deps.bookingPageUrl, credential) };
}

export async function getInvitation(store: InvitationStore, workspaceId: string, id: string): Promise<Invitation> {
  const inv = await store.find(workspaceId, id);
  if (!inv) throw new DomainError('not_found');
  return inv;
}

/** Revoke: from any state but `revoked` (409 invitation_not_active); sets revoked_at. */
export async function revokeInvitation(store: InvitationStore, workspaceId: string, id: string, now: Date): Promise<Invitation> {
  const inv = await store.findForUpdate(workspaceId, id);
  if (!inv) throw new DomainError('not_found');
  if (inv.revokedAt) throw new DomainError('invitation_not_active', { details: [{ field: 'status', issue: 'revoked' }] });
  return store.markRevoked(workspaceId, id, now);
}

const REISSUABLE: ReadonlySet<InvitationStatus> = new Set(['not_yet_valid', 'active']);

/**
 * Reissue: a new credential whose hash replaces the old one in the same row, so the old credential
 * finds nothing from the moment this commits; used_count is kept. Only from not_yet_valid or active.
 */
export async function reissueInvitation(deps: Pick<InvitationDeps, 'store' | 'bookingPageUrl'>, workspaceId: string, id: string, now: Date): Promise<InvitationWithUrl> {
  const inv = await deps.store.findForUpdate(workspaceId, id);
  if (!inv) throw new DomainError('not_found');
  const status = effectiveStatus(inv, now);
  if (!REISSUABLE.has(status)) throw new DomainError('invitation_not_active', { details: [{ field: 'status', issue: status }] });
  const credential = newCredential();
  const invitation = await deps.store.replaceCredential(workspaceId, id, hashCredential(credential), now);
  return { invitation, url: invitationUrl(deps.bookingPageUrl, credential) };
}

export async function listInvitations(
  store: InvitationStore,
  workspaceId: string,
  q: { status?: InvitationStatus; eventTypeId?: string; after?: ListPosition; limit: number },
  now: Date,
): Promise<{ items: Invitation[]; next: ListPosition | null }> {
  // One row more than asked: it only says whether another page exists.
  const rows = await store.list(workspaceId, { ...q, limit: q.limit + 1, now });
  const items = rows.slice(0, q.limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > q.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}
