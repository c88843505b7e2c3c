import { defaultAddressMode } from '@sched/address-policy';
import { env, loadConfig, retentionEnv, serviceEnv, z } from '@sched/config';
import { checkSecretsEnv } from '@sched/secrets';

/** "2000,10000,60000" → [2000, 10000, 60000]; an empty list means no retries. */
const delayList = (def: string) =>
  z
    .string()
    .default(def)
    .refine((v) => v.trim() === '' || /^\s*\d+\s*(,\s*\d+\s*)*$/.test(v), 'must be comma-separated positive integers (milliseconds)')
    .transform((v) => (v.trim() === '' ? [] : v.split(',').map((d) => Number(d.trim()))))
    .refine((ds) => ds.every((d) => Number.isInteger(d) && d >= 1), 'every delay must be at least 1 ms');

const schema = serviceEnv('calendar-sync', 8084).extend({
  /** availability's internal host API: does the host exist, its time zone and conferencing template. */
  AVAILABILITY_URL: env.url('http://127.0.0.1:8082'),
  AVAILABILITY_TIMEOUT_MS: env.int(3000, 100),
  /**
   * Key ring sealing calendar passwords (and any provider token) at rest (@sched/secrets
   * key-ring.ts): `k2:<base64>,k1:<base64>`, the first seals, all open.
   * SECRETS_KEY (+ SECRETS_KEY_ID, default k1, and SECRETS_OLD_KEYS `id:base64,…`) is the older
   * spelling of the same ring. Checked as a whole (checkSecretsEnv, below).
   */
  SECRETS_KEYS: z.string().optional(),
  SECRETS_KEY: z.string().optional(),
  SECRETS_KEY_ID: z.string().optional(),
  SECRETS_OLD_KEYS: z.string().optional(),
  /** A busy snapshot older than this is not used (decisions.md §8: 5 minutes). */
  BUSY_FRESHNESS_MS: env.int(300_000, 1),
  /** The cached busy range per host: from the start of yesterday (UTC) to this many days ahead. */
  BUSY_SNAPSHOT_DAYS: env.int(90, 1),
  /** How often the refresher looks for active hosts whose snapshot is older than this interval. */
  REFRESH_INTERVAL_MS: env.int(60_000, 50),
  /** A host counts as active (kept warm) while its busy times were asked for within this window. */
  ACTIVE_HOST_WINDOW_MS: env.int(3_600_000, 1),
  /**
   * Outbound address policy for calendar servers (docs/security.md): production refuses every address
   * that is not public unicast; local also allows loopback (a Radicale on 127.0.0.1). Default:
   * production when NODE_ENV=production, else local (as WEBHOOK_MODE).
   */
  CALENDAR_MODE: z.enum(['local', 'production']).optional(),
  /** Bound on one whole provider operation (all its HTTP requests). Callers of the busy API must wait longer. */
  PROVIDER_TIMEOUT_MS: env.int(4000, 50),
  /** Delays between attempts to write a calendar event while the provider is unavailable; then sync_failed. */
  CALENDAR_WRITE_RETRY_DELAYS_MS: delayList('2000,10000,60000'),
  /** Retention job (docs/operations.md, "Retention"): inbox and published outbox rows. */
  ...retentionEnv('RETENTION_INBOX_DAYS', 'RETENTION_OUTBOX_DAYS'),
})
  .superRefine(checkSecretsEnv, { when: () => true })
  .transform((c) => ({ ...c, CALENDAR_MODE: c.CALENDAR_MODE ?? defaultAddressMode(c.NODE_ENV) }));

export type CalendarSyncConfig = z.infer<typeof schema>;

export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<CalendarSyncConfig> {
  return loadConfig(schema, source);
}
