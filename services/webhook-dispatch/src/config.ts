import { env, loadConfig, parseConfig, retentionEnv, serviceEnv, z } from '@sched/config';
import { checkSecretsEnv } from '@sched/secrets';

/** decisions.md §11: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;

const retrySchedule = z
  .string()
  .default(DEFAULT_RETRY_SCHEDULE_MS.join(','))
  .transform((s, ctx) => {
    const parts = s.split(',').map((p) => p.trim());
    const delays = parts.map(Number);
    if (parts.some((p) => !/^[0-9]+$/.test(p)) || delays.some((d) => !Number.isSafeInteger(d) || d < 1)) {
      ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of positive integers (milliseconds)' });
      return z.NEVER;
    }
    if (delays.length > 50) {
      ctx.addIssue({ code: 'custom', message: 'at most 50 retries' });
      return z.NEVER;
    }
    return delays;
  });

export type WebhookMode = 'local' | 'production';

function defaultMode(nodeEnv: string): WebhookMode {
  return nodeEnv === 'production' ? 'production' : 'local';
}

const schema = serviceEnv('webhook-dispatch', 8085)
  .extend({
    /**
     * Key ring sealing webhook signing secrets at rest (@sched/secrets key-ring.ts):
     * `k2:<base64>,k1:<base64>`, the first seals, all open.
     * SECRETS_KEY (+ SECRETS_KEY_ID, default k1, and SECRETS_OLD_KEYS `id:base64,…`) is the older
     * spelling of the same ring. Checked as a whole (checkSecretsEnv, below).
     */
    SECRETS_KEYS: z.string().optional(),
    SECRETS_KEY: z.string().optional(),
    SECRETS_KEY_ID: z.string().optional(),
    SECRETS_OLD_KEYS: z.string().optional(),
    /** Signs list cursors (@sched/pagination). */
    CURSOR_SECRET: env.secret(),
    /** production: public addresses only, https only. Default: production when NODE_ENV=production, else local. */
    WEBHOOK_MODE: z.enum(['local', 'production']).optional(),
    WEBHOOK_TIMEOUT_MS: env.int(10_000, 100),
    WEBHOOK_RETRY_SCHEDULE_MS: retrySchedule,
    /** Each retry delay is multiplied by a random factor in [1 - ratio, 1 + ratio]. */
    WEBHOOK_JITTER_RATIO: z.coerce.number().min(0).max(1).default(0.1),
    /** Longest delay a receiver's Retry-After (on 429/503) can ask for (10 h, the longest scheduled delay). */
    WEBHOOK_RETRY_AFTER_MAX_MS: env.int(36_000_000, 0),
    /**
     * Attempts in flight to one endpoint at once, over all replicas (approximately, see docs). A busy
     * workspace sends one receiver ~100 webhooks/s at 50 Bookings/s; at 4 in flight its queue built up
     * behind a few slow answers (p99 0.5-1.1 s in the create→webhook benchmark, 0.2-0.3 s at 16).
     */
    WEBHOOK_PER_ENDPOINT_CONCURRENCY: env.int(16, 1),
    /** Attempts in flight in this replica at once: one endpoint holds at most 1/16 of them. */
    WEBHOOK_MAX_IN_FLIGHT: env.int(256, 1),
    /** How long the previous secret still signs after a rotation (24 h). */
    WEBHOOK_ROTATION_OVERLAP_MS: env.int(86_400_000, 0),
    /** How long a replica owns a claimed delivery; a crashed replica's claims come back after it. */
    WEBHOOK_LEASE_MS: env.int(60_000, 1_000),
    /** Safety-net wake-up when a NOTIFY was missed; due retries are woken for precisely. */
    WEBHOOK_POLL_INTERVAL_MS: env.int(1_000, 10),
    /** Retention job (docs/operations.md, "Retention"): inbox rows, finished deliveries and their attempts. */
    ...retentionEnv('RETENTION_INBOX_DAYS', 'RETENTION_DELIVERIES_DAYS', 'RETENTION_DEAD_LETTERS_DAYS'),
  })
  .superRefine(checkSecretsEnv, { when: () => true })
  .superRefine((c, ctx) => {
    if (c.WEBHOOK_LEASE_MS <= c.WEBHOOK_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOK_LEASE_MS'], message: 'must be longer than WEBHOOK_TIMEOUT_MS' });
    }
    // Failed deliveries are the ones on-call may still replay: never kept shorter than delivered ones.
    if (c.RETENTION_DEAD_LETTERS_DAYS < c.RETENTION_DELIVERIES_DAYS) {
      ctx.addIssue({ code: 'custom', path: ['RETENTION_DEAD_LETTERS_DAYS'], message: 'must be at least RETENTION_DELIVERIES_DAYS' });
    }
  })
  .transform((c) => ({ ...c, WEBHOOK_MODE: c.WEBHOOK_MODE ?? defaultMode(c.NODE_ENV) }));

export type WebhookDispatchConfig = z.output<typeof schema>;

/** For process entry: prints what is wrong and exits. */
export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<WebhookDispatchConfig> {
  return loadConfig(schema, source);
}

/** Throws a ConfigError listing every bad variable (tests, tools). */
export function parseDispatchConfig(source: Record<string, string | undefined>): Readonly<WebhookDispatchConfig> {
  return parseConfig(schema, source);
}
