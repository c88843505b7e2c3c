import type { DomainError, InternalCreateBooking, InvitationStatus, MeetingType, Slot } from '@sched/contracts';
import type { Invitation } from './invitation';

/** Keyset position of the invitations list: created_at then id, both descending (decisions.md §5). */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

/** Storage of invitations for the v1 API; every method is scoped by workspace. */
export interface InvitationStore {
  insert(inv: Invitation & { credentialHash: string }): Promise<Invitation>;
  find(workspaceId: string, id: string): Promise<Invitation | null>;
  /** Reads with a row lock for the rest of the transaction (revoke and reissue read, decide, then write). */
  findForUpdate(workspaceId: string, id: string): Promise<Invitation | null>;
  list(workspaceId: string, q: { status?: InvitationStatus; eventTypeId?: string; after?: ListPosition; limit: number; now: Date }): Promise<Invitation[]>;
  markRevoked(workspaceId: string, id: string, now: Date): Promise<Invitation>;
  replaceCredential(workspaceId: string, id: string, credentialHash: string, now: Date): Promise<Invitation>;
}

/** What the invitation service and the booking page need of an Event Type (availability's internal API). */
export interface PageEventType {
  id: string;
  name: string;
  description: string | null;
  slug: string;
  durationMinutes: number;
  meetingType: MeetingType;
  access: 'public' | 'invitation_only';
  bookable: boolean;
}

export interface EventTypeDirectory {
  /** Null when the workspace has no such Event Type. */
  find(workspaceId: string, eventTypeId: string): Promise<PageEventType | null>;
  findBySlug(workspaceId: string, slug: string): Promise<PageEventType | null>;
}

export interface SlotSource {
  /** The Slots query of availability; its 4xx/503 answers are thrown as DomainErrors with the same code. */
  slots(workspaceId: string, eventTypeId: string, q: { from: string; to: string; timezone: string }): Promise<Slot[]>;
}

/** The Booking the page shows back (a subset of the v1 Booking). */
export interface PageBooking {
  id: string;
  status: string;
  source: string;
  start_at: string;
  end_at: string;
  guest: { name: string; email: string; timezone: string };
  meeting: { type: string; join_url: string | null };
}

/**
 * Outcome of booking's create: `created`; `refused` (it answered, and made nothing: 4xx, or 5xx which it
 * never stores); `unknown` (no answer in time: the Booking may or may not exist).
 */
export type BookingOutcome =
  | { outcome: 'created'; booking: PageBooking }
  | { outcome: 'refused'; error: DomainError }
  | { outcome: 'unknown'; error: DomainError };

export interface BookingService {
  create(workspaceId: string, body: InternalCreateBooking, idempotencyKey: string): Promise<BookingOutcome>;
}

export interface NewReservation {
  id: string;
  startAt: Date;
  guestEmail: string;
  expiresAt: Date;
}

/** The invitation's use counter and its reservations (the saga's local steps), each step one transaction. */
export interface UseLedger {
  /** The invitation holding this credential hash now (a reissued credential's old hash finds nothing). */
  findByCredentialHash(credentialHash: string): Promise<Invitation | null>;
  /**
   * Locks the invitation of this credential (SELECT … FOR UPDATE), counts its live pending reservations,
   * lets `decide` accept (returning the reservation to insert) or refuse (throwing), and inserts it.
   * Null when no invitation holds the credential.
   */
  reserve(
    credentialHash: string,
    now: Date,
    decide: (inv: Invitation, liveReservations: number) => NewReservation,
  ): Promise<{ invitation: Invitation; reservation: NewReservation } | null>;
  /**
   * Counts the use of a confirmed Booking, once per Booking: confirms the given reservation (or the one
   * matching start and email), used_count + 1 capped at max_uses. Idempotent in the Booking id.
   */
  confirm(p: { workspaceId: string; invitationId: string; bookingId: string; reservationId?: string; startAt: Date; guestEmail: string; now: Date }): Promise<ConfirmResult>;
  /** Gives a pending reservation's use back (the booking was refused). A confirmed one stays confirmed. */
  release(workspaceId: string, reservationId: string, now: Date): Promise<void>;
}

export type ConfirmResult = 'counted' | 'already_counted' | 'over_limit' | 'no_invitation';
