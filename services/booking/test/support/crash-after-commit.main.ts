import { runService } from '@sched/runtime';
import { setupBooking } from '../../src/app';
import { readConfig } from '../../src/config';
import { BOOKING_ACCESS } from '../../src/http/access';

/**
 * The booking process of the crash test (crash.test.ts): the real service, run as main.ts runs it, with its
 * store of creates wrapped so that the process kills itself right after a create's transaction committed and
 * before the answer is sent, as a crash would. The fault lives here, on the test side; production code has no
 * such switch.
 */
void runService({
  name: 'booking',
  config: readConfig(),
  brokerCritical: false,
  access: BOOKING_ACCESS,
  setup: (ctx) =>
    setupBooking(ctx, {
      wrapCreates: (creates) => ({
        write: async (create) => {
          const written = await creates.write(create);
          if (written.kind === 'created') process.kill(process.pid, 'SIGKILL');
          return written;
        },
      }),
    }),
}).catch(() => process.exit(1));
