import { runService } from '@sched/runtime';
import { setupAvailability } from './app';
import { readConfig } from './config';
import { AVAILABILITY_ACCESS } from './http/access';

/** Owns hosts, schedules, Event Types and the booked-interval projection; answers Slots and the slot check. */
void runService({
  name: 'availability',
  config: readConfig(),
  // Slots and the slot check never need the broker: a broker outage only delays the projections.
  brokerCritical: false,
  access: AVAILABILITY_ACCESS,
  setup: (ctx) => setupAvailability(ctx),
}).catch(() => process.exit(1));
