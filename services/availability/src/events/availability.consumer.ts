import type { Db } from '@sched/db';
import { startConsumer, type Broker, type Consumer, type MessagingLogger } from '@sched/messaging';
import type { StatementPool } from '../store/prepared';
import { inbox } from '../store/schema';
import { BOOKING_EVENT_TYPES, handleBookingChanged, handleBookingsChanged } from './booking-changed.handler';
import { handleCalendarConnectionUpdated } from './calendar-connection-updated.handler';

const CALENDAR_EVENT = 'calendar.connection_updated';
const BOOKING_EVENTS = new Set<string>(BOOKING_EVENT_TYPES);

/**
 * One queue (`availability`) and one inbox for both projections: the inbox is per queue, and one
 * queue keeps each Booking's events in a single stream.
 */
export function startAvailabilityConsumer(deps: { broker: Broker; db: Db; statements: StatementPool; logger: MessagingLogger; retryDelaysMs?: readonly number[] }): Consumer {
  return startConsumer({
    broker: deps.broker,
    db: deps.db,
    inbox,
    service: 'availability',
    bindings: [...BOOKING_EVENT_TYPES, CALENDAR_EVENT],
    retryDelaysMs: deps.retryDelaysMs,
    logger: deps.logger,
    // The booked-interval upsert keeps the highest version, so a redelivered Booking event changes
    // nothing: those skip the inbox and its transaction (one statement instead of four).
    // Those waiting together (a create burst) share one multi-row upsert; a lone one goes at once.
    idempotent: {
      accepts: (envelope) => BOOKING_EVENTS.has(envelope.type),
      handler: (envelope, db) => handleBookingChanged(envelope, db, deps.statements),
      batchHandler: (envelopes, db) => handleBookingsChanged(envelopes, db, deps.statements),
    },
    // Calendar events go through the inbox. Only bound kinds arrive; anything else is acknowledged
    // (its inbox row records that it was seen). Their upsert is a statement in tx: they may share one.
    batch: true,
    handler: async (envelope, tx) => {
      if (envelope.type === CALENDAR_EVENT) await handleCalendarConnectionUpdated(envelope, tx);
    },
  });
}
