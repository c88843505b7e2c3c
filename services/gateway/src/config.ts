import { env, loadConfig, retentionEnv, serviceEnv, z } from '@sched/config';

const schema = serviceEnv('gateway', 8080).extend({
  /** The gateway is all API: `all` or `api` (the same); `worker` is refused, it has no background part. */
  PROCESS_ROLE: env.processRole(['all', 'api'], 'the gateway has no background part to run as a worker'),
  ADMIN_TOKEN: env.secret(),
  BOOKING_URL: env.url('http://127.0.0.1:8081'),
  AVAILABILITY_URL: env.url('http://127.0.0.1:8082'),
  INVITATION_URL: env.url('http://127.0.0.1:8083'),
  CALENDAR_SYNC_URL: env.url('http://127.0.0.1:8084'),
  WEBHOOK_DISPATCH_URL: env.url('http://127.0.0.1:8085'),
  UPSTREAM_TIMEOUT_MS: env.int(10000, 100),
  RATE_LIMIT_DEFAULT: env.int(100, 1),
  RATE_LIMIT_WINDOW_SECONDS: env.int(10, 1),
  /** Public address of the hosted booking page; its path is where the gateway serves the page and its API. */
  BOOKING_PAGE_URL: env.url('http://localhost:8080/book'),
  /** Page booking POSTs allowed per client IP and window (shared counters, like API keys). */
  BOOKING_PAGE_RATE_LIMIT: env.int(10, 1),
  BOOKING_PAGE_RATE_WINDOW_SECONDS: env.int(60, 1),
  /**
   * Public OAuth callback (GET /oauth/callback, where Google / Microsoft send a host back after consent)
   * per client IP and window: its own budget, so a visitor booking on the page and a host connecting a
   * calendar from one office address do not use up each other's.
   */
  OAUTH_CALLBACK_RATE_LIMIT: env.int(10, 1),
  OAUTH_CALLBACK_RATE_WINDOW_SECONDS: env.int(60, 1),
  /**
   * express `trust proxy`: the number of proxies in front (e.g. 1: the ingress controller), so the page
   * rate limit counts real client IPs. 0 behind a proxy: every visitor shares the proxy's bucket; too
   * high: clients choose their own IP with X-Forwarded-For (deploy/README.md, "Network").
   */
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  /** The operations listener (/healthz, /readyz, /metrics), never the public port; unset: PORT + 1000 (9080). */
  OPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(5000).default(5000),
  /** Retention job (docs/operations.md, "Retention"): rate-limit windows that ended. */
  ...retentionEnv(),
});

export type GatewayConfig = z.infer<typeof schema>;

export function readConfig(source: Record<string, string | undefined> = process.env): Readonly<GatewayConfig> {
  return loadConfig(schema, source);
}

/** OPS_PORT, else PORT + 1000 (8080 → 9080; an ephemeral PORT 0 gives an ephemeral 0). */
export function opsPortOf(config: Pick<GatewayConfig, 'PORT' | 'OPS_PORT'>): number {
  if (config.OPS_PORT !== undefined) return config.OPS_PORT;
  if (config.PORT === 0) return 0;
  const port = config.PORT + 1000;
  if (port > 65535) throw new Error(`OPS_PORT: PORT + 1000 (${port}) is not a port; set OPS_PORT`);
  return port;
}
