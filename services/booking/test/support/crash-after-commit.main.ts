import { startBookingService } from '../../src/booking-service';
import { readConfig } from '../../src/config';

/**
 * The booking process of the crash test (crash.test.ts): the real service, with its store of creates wrapped
 * so that the process kills itself right after a create's transaction committed and before the answer is
 * sent, as a crash would. The fault lives here, on the test side; production code has no such switch.
 */
void startBookingService(readConfig(), {
  handleSignals: true,
  wrapCreates: (creates) => ({
    write: async (create) => {
      const written = await creates.write(create);
      if (written.kind === 'created') process.kill(process.pid, 'SIGKILL');
      return written;
    },
  }),
}).catch(() => process.exit(1));
