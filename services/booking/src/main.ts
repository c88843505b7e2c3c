import { startBookingService } from './booking-service';
import { readConfig } from './config';

/** Process entry: config from the environment, SIGTERM/SIGINT drain; start-up failures exit 1 (already logged). */
void startBookingService(readConfig(), { handleSignals: true }).catch(() => process.exit(1));
