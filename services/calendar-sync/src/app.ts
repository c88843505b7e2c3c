import type { ResolveAll } from '@sched/address-policy';
import { createInternalClient } from '@sched/http';
import { startConsumer, startOutboxRelay, type Consumer, type OutboxRelay } from '@sched/messaging';
import { registerSecretsRoutes, startRetention, type ServiceContext } from '@sched/runtime';
import { SEALED_COLUMNS } from './store/sealed-columns';
import { secretBoxFromEnv, withOpenCache } from '@sched/secrets';
import type { CalendarSyncConfig } from './config';
import { BusyReader } from './domain/busy-reader';
import type { CalendarProvider } from './domain/calendar-provider';
import { BOOKING_EVENT_KINDS, bookingChangedHandler, isBookingEvent } from './events/booking-changed.handler';
import { registerBusyRoutes } from './http/busy.routes';
import { registerCalendarConnectionRoutes } from './http/calendar-connection.routes';
import { registerCalendarOAuthRoutes } from './http/calendar-oauth.routes';
import { registerCalendarResyncRoutes } from './http/calendar-resync.routes';
import { startBusyRefresher, type BusyRefresher } from './jobs/busy-refresher';
import { createHostDirectory } from './providers/availability/host-directory.client';
import { CalDavProvider } from './providers/caldav/caldav-provider';
import { configuredOAuthProviders } from './providers/oauth/configured-providers';
import { createProviderRegistry } from './providers/provider-registry';
import { startCacheInvalidation } from './store/cache-invalidation';
import { createStore } from './store/create-store';
import { createOAuthStates } from './store/oauth-state.queries';
import { calendarSyncRetentionRules } from './store/retention';
import { StoreCache } from './store/store-cache';
import { inbox, outbox } from './store/schema';
import { createTokenRows } from './store/token.queries';

/** Google's API root, the `url` of Google connections when GOOGLE_API_ROOT_URL is unset. */
const GOOGLE_API_ROOT = 'https://www.googleapis.com/';

/** Seconds a caller is told to wait after a fail-closed 503. */
const BUSY_RETRY_AFTER_SECONDS = 5;

export interface CalendarSyncParts {
  reader: BusyReader;
  cache: StoreCache;
  /** The background work; `undefined` in an `api` process (PROCESS_ROLE). */
  refresher?: BusyRefresher;
  consumer?: Consumer;
  relay?: OutboxRelay;
}

export interface SetupOptions {
  /** Another provider (tests spy on calls); default CalDAV. */
  provider?: CalendarProvider;
  /** DNS of the outbound address policy (CALENDAR_MODE), on every connection; tests fake it. */
  resolveAll?: ResolveAll;
  now?: () => Date;
}

/**
 * Wires routes, the booking.* consumer, the outbox relay and the busy refresher onto a running service.
 *
 * PROCESS_ROLE (ctx.runs): both parts read connections and snapshots through the same in-memory copies,
 * kept in step by LISTEN (store/cache-invalidation.ts), so what one process writes reaches the other as
 * it reaches another replica. The API is the routes: the busy endpoint (availability's Slots wait on it)
 * and the operator's connection, OAuth and resync routes (a resync writes the event inside its request:
 * its answer is the write's outcome). The background work is the booking.* consumer (every calendar
 * write it drives), the outbox relay, the busy refresher and the retention job. The refresher serves no
 * answer itself: it renews active hosts' snapshots well before they expire (once older than 0.9 ×
 * REFRESH_INTERVAL_MS or half of BUSY_FRESHNESS_MS, whichever is shorter: by default at 54 s of 300 s),
 * into the table the busy endpoint reads, so a worker that waits minutes for the CPU during a burst of
 * creates delays no answer; a snapshot that does expire is read afresh by the busy endpoint itself, at
 * the API's priority, as before.
 */
export function setupCalendarSync(ctx: ServiceContext<CalendarSyncConfig>, opts: SetupOptions = {}): CalendarSyncParts {
  const { config, logger, db, pool, broker, http } = ctx;
  const now = opts.now ?? (() => new Date());
  // Every write and read opens its connection's credentials: once, then from memory (libs/secrets withOpenCache).
  const sealer = withOpenCache(secretBoxFromEnv(config));
  const onWarning = (message: string, meta: Record<string, unknown>) => logger.warn(message, meta);
  // Google and Microsoft only when their OAuth client is configured; their tokens in connection_tokens.
  // The token store marks revoked connections broken through a store without the in-process cache.
  const oauth = configuredOAuthProviders(config, { rows: createTokenRows(db), sealer, store: createStore(db), onWarning });
  ctx.onStop('oauth transports', () => oauth.close());
  const provider =
    opts.provider ??
    createProviderRegistry({
      caldav: new CalDavProvider({ timeoutMs: config.PROVIDER_TIMEOUT_MS, mode: config.CALENDAR_MODE, resolveAll: opts.resolveAll, onWarning, now }),
      ...oauth.adapters,
    });
  const availability = createInternalClient({ baseUrl: config.AVAILABILITY_URL, service: 'availability', timeoutMs: config.AVAILABILITY_TIMEOUT_MS, retries: 1, signer: ctx.signer });
  // Registered before the parts that use it, so it is stopped after them.
  ctx.onStop('availability client', () => availability.close());
  const hosts = createHostDirectory(availability);
  // Connections and snapshots are read from memory while LISTEN keeps the copies in step (empty until then).
  const cache = new StoreCache();
  const invalidation = startCacheInvalidation({ pool, cache, logger });
  ctx.onStop('cache invalidation', () => invalidation.stop());
  const store = createStore(db, cache);

  const reader = new BusyReader(
    { store, provider, sealer, hosts },
    { freshnessMs: config.BUSY_FRESHNESS_MS, snapshotDays: config.BUSY_SNAPSHOT_DAYS, retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS },
  );
  if (ctx.runs.api) {
    registerCalendarConnectionRoutes(http, { store, hosts, provider, sealer, revokers: oauth.revokers, onWarning });
    registerCalendarOAuthRoutes(http, {
      hosts,
      store,
      provider,
      sealer,
      states: createOAuthStates(db),
      tokens: createTokenRows(db),
      authorizers: oauth.authorizers,
      redirectUri: config.OAUTH_REDIRECT_URL,
      // A connection's url is the provider's API base from config, never from the request.
      apiUrls: { google: config.GOOGLE_API_ROOT_URL ?? GOOGLE_API_ROOT, microsoft: config.MICROSOFT_GRAPH_URL },
      lockTimeoutMs: config.PROVIDER_TIMEOUT_MS,
      now,
    });
    registerCalendarResyncRoutes(http, { store, hosts, provider, sealer });
    registerBusyRoutes(http, reader, now);
    registerSecretsRoutes(http, 'calendar-sync', { pool, box: sealer, columns: SEALED_COLUMNS });
  }

  const parts: CalendarSyncParts = { reader, cache };
  if (ctx.runs.background) {
    // Stopped in reverse: the retention job, the refresher and the consumer first, the relay after them.
    const outboxRelay = startOutboxRelay({ pool, table: outbox, broker, logger });
    ctx.onStop('outbox relay', () => outboxRelay.stop());
    const writeBookingEvent = bookingChangedHandler({ pool, provider, sealer, hosts, retries: config.CALENDAR_WRITE_RETRY_DELAYS_MS.length, logger, cache });
    const bookings = startConsumer({
      broker,
      db,
      inbox,
      service: 'calendar-sync',
      bindings: BOOKING_EVENT_KINDS,
      retryDelaysMs: config.CALENDAR_WRITE_RETRY_DELAYS_MS,
      // Each handler holds a pooled connection while it talks to the provider: leave room for HTTP.
      prefetch: 4,
      logger,
      // Anything else on the queue has no effect here: acknowledged without a transaction.
      accepts: isBookingEvent,
      // The write runs its own transaction, with the inbox row in its first statement (store/message-transaction.ts):
      // two round trips around the provider call instead of the consumer's five. Repeating a message is safe: its
      // inbox row (or the sync record's version) makes a redelivery change nothing.
      idempotent: { accepts: () => true, handler: (envelope, _db, info) => writeBookingEvent(envelope, info) },
      // Never called: every message `accepts` takes goes to `idempotent`.
      handler: async () => undefined,
    });
    ctx.onStop('booking consumer', () => bookings.stop());
    const busyRefresher = startBusyRefresher({
      db,
      reader,
      logger,
      intervalMs: config.REFRESH_INTERVAL_MS,
      freshnessMs: config.BUSY_FRESHNESS_MS,
      activeWindowMs: config.ACTIVE_HOST_WINDOW_MS,
      leaseMs: Math.max(30_000, 3 * config.PROVIDER_TIMEOUT_MS),
      now,
    });
    ctx.onStop('busy refresher', () => busyRefresher.stop());
    startRetention(ctx, calendarSyncRetentionRules(config));
    Object.assign(parts, { relay: outboxRelay, consumer: bookings, refresher: busyRefresher });
  }
  return parts;
}
