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
  /**
   * OAuth clients of the Google Calendar and Microsoft 365 providers (docs/calendar-sync.md, "OAuth
   * apps"). A provider is available only when both its client id and secret are set; without them
   * its connections fail as those of an unknown provider. Secrets: never logged (the logger masks
   * every *_SECRET field), come from the Kubernetes Secret.
   */
  GOOGLE_OAUTH_CLIENT_ID: z.string().optional(),
  GOOGLE_OAUTH_CLIENT_SECRET: z.string().optional(),
  /** Base-URL overrides (tests point them at a local fake): the Calendar API root, the authorization, token and revoke endpoints. */
  GOOGLE_API_ROOT_URL: z.url().optional(),
  GOOGLE_OAUTH_AUTH_URL: z.url().optional(),
  GOOGLE_OAUTH_TOKEN_URL: z.url().optional(),
  GOOGLE_OAUTH_REVOKE_URL: z.url().optional(),
  MICROSOFT_OAUTH_CLIENT_ID: z.string().optional(),
  MICROSOFT_OAUTH_CLIENT_SECRET: z.string().optional(),
  /** Entra ID tenant of the authority: `common` (any account), `organizations`, or one tenant id. */
  MICROSOFT_OAUTH_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, 'must be a tenant name or id')
    .default('common'),
  /** The identity platform's login host (https; tests: a local fake, then trusted without instance discovery). */
  MICROSOFT_AUTHORITY_URL: z
    .url()
    .refine((u) => u.startsWith('https://'), 'must be https')
    .default('https://login.microsoftonline.com'),
  /** Microsoft Graph's root, stored as the `url` of Microsoft connections the OAuth flow makes (tests: the fake). */
  MICROSOFT_GRAPH_URL: z
    .url()
    .refine((u) => u.startsWith('https://'), 'must be https')
    .default('https://graph.microsoft.com'),
  /** PEM file of the certificates the Microsoft transport trusts instead of the system's (tests: the fake's CA). */
  MICROSOFT_CA_FILE: z.string().optional(),
  /**
   * The gateway's public OAuth callback (`GET /oauth/callback`), sent as redirect_uri and registered
   * with both providers' OAuth apps (docs/calendar-sync.md, "Connecting Google / Microsoft").
   */
  OAUTH_REDIRECT_URL: env.url('http://127.0.0.1:8080/oauth/callback'),
  /** Retention job (docs/operations.md, "Retention"): inbox and published outbox rows. */
  ...retentionEnv('RETENTION_INBOX_DAYS', 'RETENTION_OUTBOX_DAYS'),
})
  .superRefine(checkSecretsEnv, { when: () => true })
  .superRefine((c, ctx) => {
    // Half a client is a mistake, not "provider off".
    for (const p of ['GOOGLE', 'MICROSOFT'] as const) {
      const id = c[`${p}_OAUTH_CLIENT_ID`];
      const secret = c[`${p}_OAUTH_CLIENT_SECRET`];
      if ((id === undefined) !== (secret === undefined)) {
        ctx.addIssue({ code: 'custom', path: [id === undefined ? `${p}_OAUTH_CLIENT_ID` : `${p}_OAUTH_CLIENT_SECRET`], message: `set together with ${id === undefined ? `${p}_OAUTH_CLIENT_SECRET` : `${p}_OAUTH_CLIENT_ID`}` });
      }
    }
  })
  .transform((c) => ({ ...c, CALENDAR_MODE: c.CALENDAR_MODE ?? defaultAddressMode(c.NODE_ENV) }));

export type CalendarSyncConfig = z.infer<typeof schema>;

export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<CalendarSyncConfig> {
  return loadConfig(schema, source);
}
