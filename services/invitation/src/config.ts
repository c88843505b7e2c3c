import { env, loadConfig, retentionEnv, serviceEnv, z } from '@sched/config';
import { checkSecretsEnv } from '@sched/secrets';

const schema = serviceEnv('invitation', 8083).extend({
  /** availability: Event Types (with their access mode) and Slots. */
  AVAILABILITY_URL: env.url('http://127.0.0.1:8082'),
  /** booking: the internal create route used by the hosted booking page. */
  BOOKING_URL: env.url('http://127.0.0.1:8081'),
  /** invitation_url = {BOOKING_PAGE_URL}/i/<credential>. */
  BOOKING_PAGE_URL: env.url('http://localhost:8080/book'),
  /** Bound on one call to availability. */
  AVAILABILITY_TIMEOUT_MS: env.int(5000, 100),
  /** Bound on one call to booking's create; must stay well below RESERVATION_TTL_MS. */
  BOOKING_TIMEOUT_MS: env.int(10000, 100),
  /** A use reservation no longer holds its use after this long (the process died between reserve and settle). */
  RESERVATION_TTL_MS: env.int(120_000, 1000),
  /**
   * Key ring sealing the stored idempotent answers that carry an invitation_url (decisions.md §4)
   * (@sched/secrets key-ring.ts): `k2:<base64>,k1:<base64>`, the first seals, all open.
   * SECRETS_KEY (+ SECRETS_KEY_ID, default k1, and SECRETS_OLD_KEYS `id:base64,…`) is the older
   * spelling of the same ring. Checked as a whole (checkSecretsEnv, below).
   */
  SECRETS_KEYS: z.string().optional(),
  SECRETS_KEY: z.string().optional(),
  SECRETS_KEY_ID: z.string().optional(),
  SECRETS_OLD_KEYS: z.string().optional(),
  /** Signs list cursors (decisions.md §5). */
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters'),
  /** Retention job (docs/operations.md, "Retention"): expired idempotency keys, inbox, published outbox rows. */
  ...retentionEnv('RETENTION_INBOX_DAYS', 'RETENTION_OUTBOX_DAYS'),
}).superRefine(checkSecretsEnv, { when: () => true });

export type InvitationConfig = z.infer<typeof schema>;

export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<InvitationConfig> {
  return loadConfig(schema, source);
}
