import { toTimestamp, type BookingInvitation, type BookingInvitationWithUrl, type InvitationStatus, type Slot } from '@sched/contracts';
import type { InvitationPage, SlotWindow } from '../domain/booking-page';
import { effectiveStatus, type Invitation } from '../domain/invitation';
import type { PageEventType } from '../domain/ports';

const ts = (d: Date | null) => (d ? toTimestamp(d) : null);

/** bookingInvitationSchema: never with invitation_url (read, list, revoke). */
export function invitationOut(inv: Invitation, now: Date): BookingInvitation {
  return {
    id: inv.id,
    event_type_id: inv.eventTypeId,
    email: inv.email,
    not_before: ts(inv.notBefore),
    expires_at: toTimestamp(inv.expiresAt),
    max_uses: inv.maxUses,
    used_count: inv.usedCount,
    status: effectiveStatus(inv, now),
    metadata: inv.metadata,
    created_at: toTimestamp(inv.createdAt),
    updated_at: toTimestamp(inv.updatedAt),
    revoked_at: ts(inv.revokedAt),
  };
}

/** bookingInvitationWithUrlSchema: create and reissue only. */
export function invitationWithUrlOut(inv: Invitation, url: string, now: Date): BookingInvitationWithUrl {
  return { ...invitationOut(inv, now), invitation_url: url };
}

/** What the page shows of an Event Type: no ids, no host, nothing the visitor does not need. */
export function pageEventTypeOut(e: PageEventType) {
  return { name: e.name, description: e.description, duration_minutes: e.durationMinutes, meeting_type: e.meetingType, bookable: e.bookable };
}

/** The page's view of an invitation: its state, never the restricted address itself (the link may have leaked). */
export function invitationPageOut(p: InvitationPage) {
  const status: InvitationStatus = p.status;
  return {
    kind: 'invitation' as const,
    status,
    email_restricted: p.invitation.email !== null,
    not_before: ts(p.invitation.notBefore),
    expires_at: toTimestamp(p.invitation.expiresAt),
    event_type: pageEventTypeOut(p.eventType),
  };
}

export function publicPageOut(e: PageEventType) {
  return { kind: 'public' as const, status: 'active' as const, event_type: pageEventTypeOut(e) };
}

export function slotsOut(slots: Slot[], window: SlotWindow) {
  return { timezone: window.timezone, slots };
}
