import { randomBytes } from 'node:crypto';
import { DomainError, type InvitationStatus, type Slot } from '@sched/contracts';
import { effectiveStatus, hashCredential, isCredentialShaped, newReservationId, sameEmail, type Invitation } from './invitation';
import type { BookingService, EventTypeDirectory, PageBooking, PageEventType, SlotSource, UseLedger } from './ports';

/**
 * The hosted booking page's backend (api-v1.md rule 10): its own access rules. An invitee holds no API
 * key, only the credential of the invitation URL; a public Event Type needs nothing but its slugs.
 */
export interface PageDeps {
  ledger: UseLedger;
  eventTypes: EventTypeDirectory;
  slots: SlotSource;
  bookings: BookingService;
  reservationTtlMs: number;
  log: { warn(message: string, meta?: Record<string, unknown>): unknown };
}

export interface GuestInput {
  name: string;
  email: string;
  timezone: string;
}

export interface PageBookingInput {
  start_at: Date;
  guest: GuestInput;
}

export interface SlotWindow {
  from: string;
  to: string;
  timezone: string;
}

export interface InvitationPage {
  invitation: Invitation;
  status: InvitationStatus;
  eventType: PageEventType;
}

const notActive = (status: InvitationStatus) =>
  new DomainError('invitation_not_active', { details: [{ field: 'invitation', issue: status }] });

/** The invitation a credential holds now; 404 for a malformed, unknown or replaced one. */
export async function invitationByCredential(deps: Pick<PageDeps, 'ledger'>, credential: string): Promise<Invitation> {
  // A malformed credential cannot match; it is not even hashed and looked up.
  const inv = isCredentialShaped(credential) ? await deps.ledger.findByCredentialHash(hashCredential(credential)) : null;
  if (!inv) throw new DomainError('not_found');
  return inv;
}

/** What the page shows for a credential, in any state: unknown (or replaced by a reissue) is 404. */
export async function openInvitation(deps: PageDeps, credential: string, now: Date): Promise<InvitationPage> {
  const invitation = await invitationByCredential(deps, credential);
  const eventType = await deps.eventTypes.find(invitation.workspaceId, invitation.eventTypeId);
  if (!eventType) throw new DomainError('not_found');
  return { invitation, status: effectiveStatus(invitation, now), eventType };
}

/** Slots of the invitation's Event Type, only while the invitation is active. */
export async function invitationSlots(deps: PageDeps, credential: string, window: SlotWindow, now: Date): Promise<Slot[]> {
  const invitation = await invitationByCredential(deps, credential);
  const status = effectiveStatus(invitation, now);
  if (status !== 'active') throw notActive(status);
  return deps.slots.slots(invitation.workspaceId, invitation.eventTypeId, window);
}

/**
 * Books with a credential: the use saga (docs/invitation.md). 1. reserve a use under a row lock on the
 * invitation (status, email, used_count + live reservations < max_uses); 2. ask booking to create the
 * Booking, keyed by the reservation id; 3. on 201 confirm the use, on a refusal release it. With no
 * answer the reservation stays pending: booking.created confirms it, or it lapses after its TTL.
 * `bookingKey` (from the page's Idempotency-Key) replaces the reservation id as booking's key, so a
 * retried page request gets booking's stored answer instead of a second Booking.
 */
export async function bookWithInvitation(deps: PageDeps, credential: string, input: PageBookingInput, now: Date, bookingKey?: string): Promise<PageBooking> {
  if (!isCredentialShaped(credential)) throw new DomainError('not_found');
  const reserved = await deps.ledger.reserve(hashCredential(credential), now, (inv, live) => {
    const status = effectiveStatus(inv, now);
    if (status !== 'active') throw notActive(status);
    if (inv.email !== null && !sameEmail(inv.email, input.guest.email)) {
      throw new DomainError('invalid_request', {
        message: 'This invitation is for another email address.',
        details: [{ field: 'guest.email', issue: 'not_invited' }],
      });
    }
    if (inv.usedCount + live >= inv.maxUses) {
      // Every remaining use is held by a booking in flight; one may still fail and give its use back.
      throw new DomainError('invitation_not_active', {
        message: 'Every remaining use of this invitation is being booked right now.',
        details: [{ field: 'invitation', issue: 'uses_in_progress' }],
        retryAfterSeconds: 1,
      });
    }
    return { id: newReservationId(), startAt: input.start_at, guestEmail: input.guest.email, expiresAt: new Date(now.getTime() + deps.reservationTtlMs) };
  });
  if (!reserved) throw new DomainError('not_found');
  const { invitation, reservation } = reserved;

  const result = await deps.bookings.create(
    invitation.workspaceId,
    { event_type_id: invitation.eventTypeId, start_at: input.start_at, guest: input.guest, source: 'booking_page', invitation_id: invitation.id },
    bookingKey ?? reservation.id,
  );
  if (result.outcome === 'refused') {
    await deps.ledger.release(invitation.workspaceId, reservation.id, now);
    throw result.error;
  }
  if (result.outcome === 'unknown') throw result.error;

  try {
    await deps.ledger.confirm({
      workspaceId: invitation.workspaceId,
      invitationId: invitation.id,
      bookingId: result.booking.id,
      reservationId: reservation.id,
      startAt: input.start_at,
      guestEmail: input.guest.email,
      now,
    });
  } catch (err) {
    // The Booking exists: the guest must hear so. booking.created will count the use (idempotently).
    deps.log.warn('could not confirm an invitation use; booking.created will', { invitation_id: invitation.id, booking_id: result.booking.id, error: String(err) });
  }
  return result.booking;
}

/** A public Event Type by its slug; an invitation-only one is 404 here: it needs an invitation. */
export async function openPublicEventType(deps: Pick<PageDeps, 'eventTypes'>, workspaceId: string, slug: string): Promise<PageEventType> {
  const eventType = await deps.eventTypes.findBySlug(workspaceId, slug);
  if (!eventType || eventType.access !== 'public') throw new DomainError('not_found');
  return eventType;
}

export async function publicSlots(deps: PageDeps, workspaceId: string, slug: string, window: SlotWindow): Promise<Slot[]> {
  const eventType = await openPublicEventType(deps, workspaceId, slug);
  return deps.slots.slots(workspaceId, eventType.id, window);
}

/**
 * A public booking has no use to count; the key only makes booking's own retry safe (derived from the
 * page's Idempotency-Key when it sent one, so a retried page request is answered by booking's replay).
 */
export async function bookPublic(deps: PageDeps, workspaceId: string, slug: string, input: PageBookingInput, bookingKey?: string): Promise<PageBooking> {
  const eventType = await openPublicEventType(deps, workspaceId, slug);
  const result = await deps.bookings.create(
    workspaceId,
    { event_type_id: eventType.id, start_at: input.start_at, guest: input.guest, source: 'booking_page', invitation_id: null },
    bookingKey ?? `page_${randomBytes(16).toString('base64url')}`,
  );
  if (result.outcome !== 'created') throw result.error;
  return result.booking;
}
