import { EVENT_DATA_SCHEMAS } from '@sched/contracts';
import type { Db } from '@sched/db';
import type { EventEnvelope } from '@sched/messaging';
import { bookedIntervalFromEvent } from '../domain/booked-interval';
import { findBuffers } from '../store/event-type.queries';
import type { StatementPool } from '../store/prepared';
import { upsertBookedInterval } from '../store/projection.queries';

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
