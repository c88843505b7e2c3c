import { runService } from '@sched/runtime';
import { setupCalendarSync } from './app';
import { readConfig } from './config';
import { CALENDAR_SYNC_ACCESS } from './http/access';

/**
 * Owns calendar connections, busy snapshots and calendar event writes. The broker is critical for
 * readiness: writing Booking events is driven by booking.* messages.
 */
void runService({
  name: 'calendar-sync',
  config: readConfig(),
  brokerCritical: true,
  access: CALENDAR_SYNC_ACCESS,
  setup: (ctx) => setupCalendarSync(ctx),
}).catch(() => process.exit(1));
