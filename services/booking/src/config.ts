import { env, loadConfig, retentionEnv, serviceEnv, z } from '@sched/config';
import { SLOT_CHECKS_MAX } from '@sched/contracts';

const schema = serviceEnv('booking', 8081).extend({
  /** The availability service, asked at create and reschedule whether a start is bookable. */
  AVAILABILITY_URL: env.url('http://127.0.0.1:8082'),
  /** HMAC key of the Bookings list cursors; the same on every replica. */
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters'),
  /** Bound on one slot check, waiting for its call included; then the request fails closed (504 upstream_unavailable). */
  SLOT_CHECK_TIMEOUT_MS: env.int(3000, 50),
  /**
   * Concurrent slot checks share one call to availability (docs/booking.md): calls out at once per
   * workspace and principal; checks asked meanwhile wait and go together in the next one.
   */
  SLOT_CHECK_BATCHES_IN_FLIGHT: env.int(2, 1),
  /** Most slot checks in one call (availability takes up to SLOT_CHECKS_MAX). */
  SLOT_CHECK_BATCH_MAX: z.coerce.number().int().min(1).max(SLOT_CHECKS_MAX).default(32),
  /**
   * Group commit of creates (docs/booking.md): batches in the database at once, each on its own pooled
   * connection. Creates that arrive while they run wait and go in together as the next batch.
   */
  CREATE_BATCHES_IN_FLIGHT: env.int(2, 1),
  /** Most creates in one batch (one transaction). */
  CREATE_BATCH_MAX: env.int(64, 1),
  /** Retention job (docs/operations.md, "Retention"): expired idempotency keys, inbox, published outbox rows. */
  ...retentionEnv('RETENTION_INBOX_DAYS', 'RETENTION_OUTBOX_DAYS'),
});

export type BookingConfig = z.infer<typeof schema>;

export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<BookingConfig> {
  return loadConfig(schema, source);
}
