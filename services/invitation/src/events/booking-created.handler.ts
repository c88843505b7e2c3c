import { bookingEventDataSchema } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import type { EventEnvelope } from '@sched/messaging';
import type { UseLedger } from '../domain/ports';

/**
 * Cheap pre-check on the raw envelope: only a booking.created whose data carries an invitation id can have
 * an effect here. Anything it cannot read is let through, so handleBookingCreated's parse decides (and a
 * malformed event fails and dead-letters as before).
 */
export function concernsAnInvitation(envelope: EventEnvelope): boolean {
  if (envelope.type !== 'booking.created') return false;
  const data = envelope.data as { internal?: { invitation_id?: unknown } } | null;
  if (data === null || typeof data !== 'object') return true;
  return data.internal?.invitation_id !== undefined && data.internal.invitation_id !== null;
}

/**
 * booking.created with data.internal.invitation_id: the Booking was made with a credential, so its use
 * counts. Usually the page request already confirmed it and this is a no-op (the ledger is idempotent in
 * the Booking id); it matters when the process died between booking's commit and the confirm.
 */
export async function handleBookingCreated(envelope: EventEnvelope, ledgerFor: (tx: DbTx) => UseLedger, tx: DbTx, now: Date): Promise<string> {
  if (envelope.type !== 'booking.created') return 'ignored';
  const data = bookingEventDataSchema.parse(envelope.data);
  const invitationId = data.internal?.invitation_id;
  if (!invitationId) return 'ignored';
  return ledgerFor(tx).confirm({
    workspaceId: envelope.workspace_id,
    invitationId,
    bookingId: data.booking.id,
    startAt: new Date(data.booking.start_at),
    guestEmail: data.booking.guest.email,
    now,
  });
}
