import type { Db, DbTx } from '@sched/db';
import { startConsumer, type Broker, type Consumer, type MessagingLogger } from '@sched/messaging';
import { inbox } from '../store/schema';
import { BOOKING_EVENT_TYPES, handleBookingChanged } from './booking-changed.handler';
import { handleCalendarConnectionUpdated } from './calendar-connection-updated.handler';

const HANDLERS: Record<string, (envelope: Parameters<typeof handleBookingChanged>[0], tx: DbTx) => Promise<void>> = {
  ...Object.fromEntries(BOOKING_EVENT_TYPES.map((t) => [t, handleBookingChanged])),
  'calendar.connection_updated': handleCalendarConnectionUpdated,
};

/**
 * One queue (`availability`) and one inbox for both projections: the inbox is per queue, and one
 * queue keeps each Booking's events in a single stream.
 */
export function startAvailabilityConsumer(deps: { broker: Broker; db: Db; logger: MessagingLogger; retryDelaysMs?: readonly number[] }): Consumer {
  return startConsumer({
    broker: deps.broker,
    db: deps.db,
    inbox,
    service: 'availability',
    bindings: Object.keys(HANDLERS),
    retryDelaysMs: deps.retryDelaysMs,
    logger: deps.logger,
    handler: async (envelope, tx) => {
      const handle = HANDLERS[envelope.type];
      // Only bound kinds arrive; anything else is acknowledged (its inbox row records that it was seen).
      if (handle) await handle(envelope, tx);
    },
  });
}
