import { env, loadConfig, parseConfig, retentionEnv, serviceEnv, z } from '@sched/config';

const schema = serviceEnv('availability', 8082).extend({
  /** calendar-sync's internal API, for busy times. */
  CALENDAR_SYNC_URL: env.url('http://127.0.0.1:8084'),
  /** Signs list cursors (decisions.md §5); the same secret on every replica. */
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters'),
  /**
   * Bound on one busy-times call; past it the Slots query fails closed with 503. Above calendar-sync's
   * PROVIDER_TIMEOUT_MS (4 s), so a slow but working provider read answers instead of timing out here.
   */
  BUSY_TIMEOUT_MS: env.int(5000, 50),
  /**
   * Longest life of a cached Slots answer (0: no cache). Changes to this service's own data drop
   * answers at once on every replica; this bounds only how much older than calendar-sync's snapshot
   * the calendar busy time inside an answer can be.
   */
  SLOTS_CACHE_TTL_MS: env.int(5000, 0),
  /** Memory bound of the Slots answer cache, in MiB of JSON. */
  SLOTS_CACHE_MAX_MB: env.int(64, 0),
  /** Retention job (docs/operations.md, "Retention"): inbox rows. */
  ...retentionEnv('RETENTION_INBOX_DAYS'),
});

export type AvailabilityConfig = z.infer<typeof schema>;

/** For main.ts: exits with a readable message when the environment is wrong. */
export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<AvailabilityConfig> {
  return loadConfig(schema, source);
}

/** For tests and tools: throws ConfigError instead of exiting. */
export function parseAvailabilityConfig(source: Record<string, string | undefined>): Readonly<AvailabilityConfig> {
  return parseConfig(schema, source);
}
