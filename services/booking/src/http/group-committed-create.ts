import type { Request } from 'express';
import { DomainError } from '@sched/contracts';
import { DEFAULT_RETENTION_MS, defaultStorableError, idempotencyRowIdentity, replayFoundRow, type IdempotentOutcome } from '@sched/idempotency';
import { toBookingResource, type BookingRecord } from '../domain/booking';
import { announcementEnvelope } from '../events/booking-events';
import { createBatchRow, type CreateBatcher } from '../store/create-batch.queries';
import { idempotencyKeys } from '../store/schema';
import { bookingEnvelope, idempotentRequest } from './idempotent-response';

/**
 * A create whose slot check said "bookable", through the group commit (store/create-batch.queries.ts). The
 * answers are those of idempotentMutation + createBooking, byte for byte: the same key row, fingerprint,
 * stored 201 or 409 slot_unavailable body, outbox event and replay rules (decisions.md §4), computed here;
 * the database function only picks which one applies.
 */
export async function groupCommittedCreate(req: Request, creates: CreateBatcher, booking: BookingRecord, now: Date): Promise<IdempotentOutcome> {
  const { key, scope, fingerprint, requestId } = idempotentRequest(req, booking.workspaceId);
  const identity = key === undefined ? undefined : idempotencyRowIdentity(idempotencyKeys, scope, key);
  const created = { status: 201, body: bookingEnvelope(toBookingResource(booking), requestId) };
  const refusal = new DomainError('slot_unavailable');
  const conflict = defaultStorableError(refusal, requestId)!;

  const result = await creates.submit(
    createBatchRow({
      booking,
      event: announcementEnvelope({ type: 'booking.created', booking, occurredAt: now }),
      key: identity && { ...identity, fingerprint, retentionMs: DEFAULT_RETENTION_MS },
      createdBody: JSON.stringify(created.body),
      conflictBody: JSON.stringify(conflict.body),
    }),
  );
  switch (result.outcome) {
    case 'in_progress':
      throw new DomainError('idempotency_request_in_progress', { retryAfterSeconds: 1 });
    case 'found':
      return replayFoundRow(result, { id: identity!.id, fingerprint, requestId });
    case 'created':
      return { ...created, replayed: false, headers: {} };
    case 'conflict':
      // Keyed: the 409 is stored and answered like any stored answer; without a key it is simply thrown.
      if (identity === undefined) throw refusal;
      return { ...conflict, replayed: false, headers: {} };
  }
}
