import { EVENT_DATA_SCHEMAS } from '@sched/contracts';
import type { Db } from '@sched/db';
import type { EventEnvelope } from '@sched/messaging';
import { bookedIntervalFromEvent, type Buffers } from '../domain/booked-interval';
import { findBuffers } from '../store/event-type.queries';
import type { StatementPool } from '../store/prepared';
import { upsertBookedInterval, upsertBookedIntervals } from '../store/projection.queries';

export const BOOKING_EVENT_TYPES = ['booking.created', 'booking.rescheduled', 'booking.cancelled'] as const;

/**
 * booking.created / rescheduled / cancelled → the booked-interval projection, so Slots exclude
 * Bookings without asking the booking service. Order does not matter: the highest version wins and a
 * cancelled Booking stops blocking. A message whose data breaks the contract throws, so it ends in
 * the DLQ where on-call sees it, rather than being acknowledged and lost. Both statements are safe to
 * repeat and atomic alone, so it runs without the inbox and outside any transaction
 * (availability.consumer.ts); the upsert is a named statement on the statement pool.
 */
export async function handleBookingChanged(envelope: EventEnvelope, db: Db, statements: StatementPool): Promise<void> {
  const data = EVENT_DATA_SCHEMAS['booking.created'].parse(envelope.data);
  const fallback = data.internal ? null : await findBuffers(db, envelope.workspace_id, data.booking.event_type_id);
  await upsertBookedInterval(statements, bookedIntervalFromEvent(envelope.workspace_id, data, fallback));
}

/**
 * Several booking.* events at once (the consumer's `idempotent.batchHandler`, for the events waiting
 * together): the rows of all in one upsert, one per Booking at its highest version, which leaves what
 * `handleBookingChanged` of each leaves in any order. An event whose data breaks the contract throws, so
 * the consumer runs each event of the batch alone and only that one ends in the DLQ.
 */
export async function handleBookingsChanged(envelopes: readonly EventEnvelope[], db: Db, statements: StatementPool): Promise<void> {
  const parsed = envelopes.map((envelope) => ({ envelope, data: EVENT_DATA_SCHEMAS['booking.created'].parse(envelope.data) }));
  // Events without data.internal (an older publisher): each Event Type's buffers read once per batch.
  const buffers = new Map<string, Promise<Buffers | null>>();
  const fallbackFor = (workspaceId: string, eventTypeId: string): Promise<Buffers | null> => {
    const key = `${workspaceId}\u0000${eventTypeId}`;
    let found = buffers.get(key);
    if (!found) buffers.set(key, (found = findBuffers(db, workspaceId, eventTypeId)));
    return found;
  };
  const rows = [];
  for (const { envelope, data } of parsed) {
    const fallback = data.internal ? null : await fallbackFor(envelope.workspace_id, data.booking.event_type_id);
    rows.push(bookedIntervalFromEvent(envelope.workspace_id, data, fallback));
  }
  await upsertBookedIntervals(statements, rows);
}
