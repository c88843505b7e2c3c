import { createPool } from '@sched/db';
import { buildOpenApiDocument, OPENAPI_DOCUMENT_PATH } from '@sched/openapi';
import { createForwardClient, createInternalClient, type ForwardClient } from '@sched/http';
import { startRetention, type ServiceContext } from '@sched/runtime';
import type { GatewayConfig } from './config';
import { createKeyAuthenticator, type StoredKey } from './domain/api-key-auth';
import { TtlCache } from './domain/key-cache';
import type { Upstream } from './domain/route-table';
import { adminAuth } from './http/admin-auth.middleware';
import { registerAdminRoutes } from './http/admin.routes';
import { bookingPageDeps, registerBookingPageRoutes } from './http/booking-page.routes';
import { registerOAuthCallbackRoute } from './http/oauth-callback.routes';
import { apiKeyAuth } from './http/api-key-auth.middleware';
import { registerV1Routes, v1Routes } from './http/v1.routes';
import { registerV1FastPath } from './http/v1-fast-path';
import { createAdminStore } from './store/admin-store';
import { findKeyByHash } from './store/api-key.queries';
import { addRequests, countRequest } from './store/rate-limit.queries';
import { gatewayRetentionRules } from './store/retention';

/**
 * The gateway's composition root (main.ts and in-process tests): admin API, key auth and rate limit on
 * /v1, routing to the owning services, each forwarded request carrying an internal credential that says
 * who it acts for (docs/security.md), the booking page, and the retention job. It owns no queue
 * (runService `broker: false`); its public port serves /v1, /admin/v1, /book and /healthz, the
 * operations port /readyz and /metrics (runService `opsPort`).
 *
 * PROCESS_ROLE: the gateway is all API (runService `background: false`; `worker` is refused at start).
 * Its one job, the retention of rate-limit windows (a delete a minute), goes with the API in every process.
 */
export function setupGateway(ctx: ServiceContext<GatewayConfig, undefined>): void {
  const { config, logger, db, http, signer } = ctx;
  // Counter upserts (one in flight per key and window, batching the requests that arrive meanwhile)
  // commit without waiting for the WAL flush. Losing a few increments in a crash only loosens one window.
  const counterPool = createPool(config.DATABASE_URL, { applicationName: 'gateway-counters', logger, asyncCommit: true, max: 5 });
  ctx.onStop('postgres counters', () => counterPool.end());
  // The forwarding hop is the hottest path: undici, driven lean (libs/http forward-client.ts).
  // One retry on a connection fault, for idempotent methods only (never a POST). A timeout is not
  // retried: the caller gets its 504 after one UPSTREAM_TIMEOUT_MS, not two.
  const client = (url: string, service: Upstream) =>
    createForwardClient({ baseUrl: url, service, timeoutMs: config.UPSTREAM_TIMEOUT_MS, retries: 1, retryTimeouts: false, signer });
  const upstreams: Record<Upstream, ForwardClient> = {
    booking: client(config.BOOKING_URL, 'booking'),
    availability: client(config.AVAILABILITY_URL, 'availability'),
    invitation: client(config.INVITATION_URL, 'invitation'),
    'calendar-sync': client(config.CALENDAR_SYNC_URL, 'calendar-sync'),
    'webhook-dispatch': client(config.WEBHOOK_DISPATCH_URL, 'webhook-dispatch'),
  };
  // The booking page's backend calls use the internal client (JSON in, parsed JSON out).
  const invitation = createInternalClient({ baseUrl: config.INVITATION_URL, service: 'invitation', timeoutMs: config.UPSTREAM_TIMEOUT_MS, retries: 1, retryTimeouts: false, signer });
  // The OAuth callback page's backend (a POST: never retried).
  const calendarSync = createInternalClient({ baseUrl: config.CALENDAR_SYNC_URL, service: 'calendar-sync', timeoutMs: config.UPSTREAM_TIMEOUT_MS, retries: 0, retryTimeouts: false, signer });
  ctx.onStop('upstream clients', () => {
    Object.values(upstreams).forEach((c) => c.close());
    invitation.close();
    calendarSync.close();
  });

  if (config.TRUST_PROXY > 0) http.app.set('trust proxy', config.TRUST_PROXY);
  const authenticate = createKeyAuthenticator({
    findKeyByHash: (hash) => findKeyByHash(db, hash),
    cache: new TtlCache<StoredKey | null>(Math.max(1, config.KEY_CACHE_TTL_MS)),
  });

  // The machine-readable contract is public: served before authentication (issue 8).
  const openApiDocument = buildOpenApiDocument();
  http.route('GET', OPENAPI_DOCUMENT_PATH, (_req, res) => {
    res.json(openApiDocument);
  });

  const v1Auth = apiKeyAuth({
    authenticate,
    authenticateCached: authenticate.cached,
    addRequests: (keyId, start, n) => addRequests(counterPool, keyId, start, n),
    defaultPolicy: { limit: config.RATE_LIMIT_DEFAULT, windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS },
    logger,
  });
  // Authentication runs before routing so that 401 comes before 404/405 (decisions.md §2).
  http.app.use('/admin', adminAuth(config.ADMIN_TOKEN));
  http.app.use('/v1', v1Auth);
  registerAdminRoutes(http, { store: createAdminStore(db), upstreams });
  // The v1 operations are answered before express by the same handlers in the same order
  // (v1-fast-path.ts); every other request goes to express.
  registerV1FastPath(http, registerV1Routes(http, v1Routes(upstreams)), v1Auth);
  registerBookingPageRoutes(http, bookingPageDeps({ config, db, counterPool, invitation, logger }));
  registerOAuthCallbackRoute(http, {
    calendarSync,
    countRequest: (key, start) => countRequest(counterPool, key, start),
    policy: { limit: config.OAUTH_CALLBACK_RATE_LIMIT, windowSeconds: config.OAUTH_CALLBACK_RATE_WINDOW_SECONDS },
    logger,
  });

  // Old rate-limit windows go in bounded batches; safe with every replica running it (libs/db retention).
  // The gateway has no background part (ctx.runs.api is always true here): the job runs in every process.
  startRetention(ctx, gatewayRetentionRules(config));
}
