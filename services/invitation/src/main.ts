import { runService } from '@sched/runtime';
import { setupInvitation } from './app';
import { readConfig } from './config';
import { INVITATION_ACCESS } from './http/access';

/** Owns Booking Invitations, credential hashes and use reservations; backs the hosted booking page. */
void runService({
  name: 'invitation',
  config: readConfig(),
  brokerCritical: false,
  access: INVITATION_ACCESS,
  setup: (ctx) => setupInvitation(ctx),
}).catch(() => process.exit(1));
