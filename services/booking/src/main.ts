import { runService } from '@sched/runtime';
import { setupBooking } from './app';
import { readConfig } from './config';
import { BOOKING_ACCESS } from './http/access';

/**
 * Owns Bookings, their idempotency keys and its outbox; publishes booking.* and calendar.created/failed,
 * consumes calendar-sync's results.
 */
void runService({
  name: 'booking',
  config: readConfig(),
  // The API never waits on the broker: events wait in the outbox during a broker outage.
  brokerCritical: false,
  access: BOOKING_ACCESS,
  setup: (ctx) => setupBooking(ctx),
}).catch(() => process.exit(1));
