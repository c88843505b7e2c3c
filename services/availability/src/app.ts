import { createPool } from '@sched/db';
import { createInternalClient } from '@sched/http';
import type { Consumer } from '@sched/messaging';
import { createCursorCodec } from '@sched/pagination';
import { startRetention, type ServiceContext } from '@sched/runtime';
import type { AvailabilityConfig } from './config';
import { startAvailabilityConsumer } from './events/availability.consumer';
import { registerAdminRoutes } from './http/admin.routes';
import { allOf, CalendarBusyCopies } from './http/calendar-busy-cache';
import { createCalendarBusyReader } from './http/calendar-sync.client';
import type { RouteDeps } from './http/deps';
import { registerInternalRoutes } from './http/internal.routes';
import { registerV1Routes } from './http/v1.routes';
import { createEventTypeStore, loadSlotContext } from './store/event-type.queries';
import { createHostStore } from './store/host.queries';
import { NotifiedSlotsCache } from './store/notified-slots-cache';
import { bookedIntervalsOverlapping } from './store/projection.queries';
import { availabilityRetentionRules } from './store/retention';
import { startSlotsInvalidation } from './store/slots-invalidation';

/** Busy-time copies held (one per host and UTC day span): a few hundred KB at most. */
const CALENDAR_BUSY_COPIES = 10_000;

export interface SetupOptions {
  /** Consumer retry delays; tests shorten them. */
  retryDelaysMs?: readonly number[];
  /** The clock; tests fix it. */
  now?: () => Date;
}

/** What setupAvailability started (tests wait on the consumer). */
export interface AvailabilityParts {
  /** The projection consumer; `undefined` in an `api` process (PROCESS_ROLE). */
  consumer?: Consumer;
}

/**
 * Wires routes and the event consumer onto the runtime's context (main.ts and in-process tests).
 *
 * PROCESS_ROLE (ctx.runs): the API is the routes with the Slots answer cache, the calendar busy copies and
 * the LISTEN that keeps both in step; the background work is the projection consumer and the retention
 * job. What the consumer writes (booked intervals, calendar connection states) reaches the API's caches
 * as it reaches every replica's: the tables' triggers NOTIFY on commit (store/slots-invalidation.ts).
 */
export function setupAvailability(ctx: ServiceContext<AvailabilityConfig>, opts: SetupOptions = {}): AvailabilityParts {
  const { config, db, logger } = ctx;
  // The hot path's named statements (the slot check's and Slots' reads, the projection upsert) on
  // connections of their own, each statement planned once per connection (store/prepared.ts).
  // Registered first, so it closes after the consumer and routes that use it.
  const statements = createPool(config.DATABASE_URL, { applicationName: ctx.name, genericPlans: true, logger });
  ctx.onStop('postgres (named statements)', () => statements.end());

  if (ctx.runs.api) {
    const calendarSync = createInternalClient({ baseUrl: config.CALENDAR_SYNC_URL, service: 'calendar-sync', timeoutMs: config.BUSY_TIMEOUT_MS, signer: ctx.signer });
    ctx.onStop('calendar-sync client', () => calendarSync.close());

    const now = opts.now ?? (() => new Date());
    const slotsCache = new NotifiedSlotsCache({ ttlMs: config.SLOTS_CACHE_TTL_MS, maxBytes: config.SLOTS_CACHE_MAX_MB * 1024 * 1024 });
    // Busy time from calendar-sync, kept as long as a Slots answer may keep it (http/calendar-busy-cache.ts).
    const busyCopies = new CalendarBusyCopies({ ttlMs: config.SLOTS_CACHE_TTL_MS, maxEntries: CALENDAR_BUSY_COPIES, now: () => now().getTime() });
    if (config.SLOTS_CACHE_TTL_MS > 0 && config.SLOTS_CACHE_MAX_MB > 0) {
      const invalidation = startSlotsInvalidation({ pool: ctx.pool, cache: allOf(slotsCache, busyCopies), logger });
      ctx.onStop('slots cache invalidation', () => invalidation.stop());
    }

    const deps: RouteDeps = {
      hosts: createHostStore(db),
      eventTypes: createEventTypeStore(db),
      slots: {
        loadContext: (ws, id) => loadSlotContext(statements, ws, id),
        bookedIntervals: (ws, hostId, range, exclude) => bookedIntervalsOverlapping(statements, ws, hostId, range, exclude),
        calendarBusy: busyCopies.reader(createCalendarBusyReader(calendarSync, logger)),
      },
      slotsCache,
      cursors: createCursorCodec(config.CURSOR_SECRET),
      logger,
      now,
    };
    registerV1Routes(ctx.http, deps);
    registerAdminRoutes(ctx.http, deps);
    registerInternalRoutes(ctx.http, deps);
  }

  let consumer: Consumer | undefined;
  if (ctx.runs.background) {
    const projections = startAvailabilityConsumer({ broker: ctx.broker, db, statements, logger, retryDelaysMs: opts.retryDelaysMs });
    ctx.onStop('availability consumer', () => projections.stop());
    consumer = projections;
    startRetention(ctx, availabilityRetentionRules(config));
  }
  return { consumer };
}
