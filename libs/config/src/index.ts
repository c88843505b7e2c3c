import { z } from 'zod';

/** Thrown when the environment does not satisfy a service's schema. The message lists every bad variable. */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Parses the environment once with a zod object schema and returns a frozen, typed object.
 * Empty strings count as unset so that `FOO= cmd` falls back to the default.
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: Env = process.env): Readonly<z.infer<S>> {
  const cleaned: Env = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') cleaned[k] = v;
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = i.path.join('.') || '(environment)';
        const got = typeof i.path[0] === 'string' && cleaned[i.path[0]] !== undefined ? ' (value was set but rejected)' : '';
        return `${name}: ${i.message}${got}`;
      }),
    );
  }
  return Object.freeze(result.data) as Readonly<z.infer<S>>;
}

/** Like parseConfig, but prints the readable message and exits with status 1: for process entry points. */
export function loadConfig<S extends z.ZodType>(schema: S, env: Env = process.env): Readonly<z.infer<S>> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

const NICE_RANGE = 'must be an integer from 0 (normal priority) to 19 (the lowest)';

/**
 * What one process of a service runs (PROCESS_ROLE): `all` its API and its background work (one
 * process, the default), `api` the HTTP API and what answering needs, `worker` the background work
 * (consumers, outbox relays, retention, delivery workers, schedulers) with only /healthz, /readyz and
 * /metrics on its port. README, "Environment variables"; docs/architecture.md, "Processes".
 */
export const PROCESS_ROLES = ['all', 'api', 'worker'] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];

/** Reusable field types for environment variables. */
export const env = {
  port: (def: number) => z.coerce.number().int().min(0).max(65535).default(def),
  int: (def: number, min = 0) => z.coerce.number().int().min(min).default(def),
  url: (def?: string) => (def === undefined ? z.url() : z.url().default(def)),
  string: (def?: string) => (def === undefined ? z.string().min(1) : z.string().min(1).default(def)),
  bool: (def: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(def ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  logLevel: () => z.enum(['error', 'warn', 'info', 'http', 'debug']).default('info'),
  /** A secret of at least 32 characters; never logged by @sched/logger. */
  secret: () => z.string().min(32, 'must be at least 32 characters'),
  /** A CPU nice value: 0 (normal priority) to 19 (the lowest). */
  nice: (def = 0) => z.coerce.number({ error: NICE_RANGE }).int(NICE_RANGE).min(0, NICE_RANGE).max(19, NICE_RANGE).default(def),
  /**
   * PROCESS_ROLE, default `all`. `roles` narrows it for a service without one of the parts (the gateway
   * has no background part), `why` says so in the error.
   */
  processRole: (roles: readonly ProcessRole[] = PROCESS_ROLES, why?: string) => {
    const error = `must be one of ${roles.join(', ')}${why ? ` (${why})` : ''}`;
    return z.enum(roles as [ProcessRole, ...ProcessRole[]], { error }).default('all');
  },
};

const INTERNAL_AUTH_KEYS_REQUIRED = 'required: <key id>:<base64 of 32 random bytes>[,<key id>:<base64>…], newest first (docs/security.md)';

/** Environment every service reads: where it listens and what it connects to. */
export function serviceEnv(service: string, defaultPort: number) {
  const role = `svc_${service.replace(/-/g, '_')}`;
  return z.object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    PORT: env.port(defaultPort),
    HOST: env.string('127.0.0.1'),
    DATABASE_URL: env.url(`postgres://${role}@127.0.0.1:5432/scheduling`),
    AMQP_URL: env.url('amqp://guest:guest@127.0.0.1:5672'),
    /** Prefix for exchange and queue names; tests use it to isolate runs on one broker. */
    AMQP_PREFIX: z.string().default(''),
    LOG_LEVEL: env.logLevel(),
    SHUTDOWN_TIMEOUT_MS: env.int(10000),
    /**
     * The process's CPU nice value, applied once at start by runService (@sched/runtime): 0 leaves the
     * priority as it is; more lets the API's processes go first on a busy machine. `npm start` gives the
     * background services (calendar-sync, webhook-dispatch) 15 (README, "Environment variables").
     */
    CPU_NICE: env.nice(),
    /**
     * Which part of the service this process runs: `all` (default), `api` or `worker` (PROCESS_ROLES).
     * `npm start` runs each service with background work as two processes, `<svc>` (api) and
     * `<svc>-worker` (worker, at BACKGROUND_CPU_NICE).
     */
    PROCESS_ROLE: env.processRole(),
    /**
     * The internal credential key ring (docs/security.md): `<key id>:<base64 of ≥ 32 bytes>`, comma-separated,
     * newest first; the first signs, all verify. The same ring in every service and the gateway.
     */
    INTERNAL_AUTH_KEYS: z.string({ error: INTERNAL_AUTH_KEYS_REQUIRED }).min(1, INTERNAL_AUTH_KEYS_REQUIRED),
  });
}

/** Every retention setting (docs/operations.md, "Retention"); a service reads those of the tables it owns. */
const RETENTION_FIELDS = {
  /** How often the retention job runs. */
  RETENTION_INTERVAL_MS: env.int(60_000, 1000),
  /** Rows per delete statement (each its own short transaction). */
  RETENTION_BATCH_SIZE: env.int(1000, 1),
  /** Days a handled event's inbox row is kept. */
  RETENTION_INBOX_DAYS: env.int(14, 1),
  /** Days a published outbox row is kept (unpublished rows are never pruned). */
  RETENTION_OUTBOX_DAYS: env.int(7, 1),
  /** Days a finished webhook delivery (and its attempts) is kept after it succeeded. */
  RETENTION_DELIVERIES_DAYS: env.int(30, 1),
  /** Days a failed (dead-lettered) webhook delivery is kept after it failed, unless replayed meanwhile. */
  RETENTION_DEAD_LETTERS_DAYS: env.int(90, 1),
};

export type RetentionPeriod = Exclude<keyof typeof RETENTION_FIELDS, 'RETENTION_INTERVAL_MS' | 'RETENTION_BATCH_SIZE'>;

/** The retention job's interval and batch size plus the given periods, to spread into a service's schema. */
export function retentionEnv<K extends RetentionPeriod>(...periods: K[]): Pick<typeof RETENTION_FIELDS, 'RETENTION_INTERVAL_MS' | 'RETENTION_BATCH_SIZE' | K> {
  const fields: Record<string, unknown> = { RETENTION_INTERVAL_MS: RETENTION_FIELDS.RETENTION_INTERVAL_MS, RETENTION_BATCH_SIZE: RETENTION_FIELDS.RETENTION_BATCH_SIZE };
  for (const p of periods) fields[p] = RETENTION_FIELDS[p];
  return fields as Pick<typeof RETENTION_FIELDS, 'RETENTION_INTERVAL_MS' | 'RETENTION_BATCH_SIZE' | K>;
}

export { z };
