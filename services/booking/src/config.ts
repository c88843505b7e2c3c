import { env, loadConfig, retentionEnv, serviceEnv, z } from '@sched/config';

const schema = serviceEnv('booking', 8081).extend({
  /** The availability service, asked at create and reschedule whether a start is bookable. */
  AVAILABILITY_URL: env.url('http://127.0.0.1:8082'),
  /** HMAC key of the Bookings list cursors; the same on every replica. */
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters'),
  /** Bound on one slot check; then the request fails closed (504 upstream_unavailable). */
  SLOT_CHECK_TIMEOUT_MS: env.int(3000, 50),
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
