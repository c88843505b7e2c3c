import { outboxChannel, outboxSchemaName, startConsumer, startOutboxRelay, type Consumer } from '@sched/messaging';
import { createCursorCodec } from '@sched/pagination';
import { startRetention, type ServiceContext } from '@sched/runtime';
import type { BookingConfig } from './config';
import { CALENDAR_RESULT_BINDINGS, calendarResultHandler } from './events/calendar-result.handler';
import { createSlotChecker } from './http/availability.client';
import { registerBookingRoutes } from './http/booking.routes';
import type { BookingCreates } from './domain/ports';
import { bookingCreates } from './store/create-batch.queries';
import { bookingRetentionRules } from './store/retention';
import { inbox, outbox } from './store/schema';

export interface SetupOptions {
  /** The clock; tests fix it. */
  clock?: () => Date;
  /**
   * Wraps the store of creates. For tests that inject a fault between the store and the answer (the crash
   * test kills the process after a commit, before the reply); production passes nothing.
   */
  wrapCreates?: (creates: BookingCreates) => BookingCreates;
}

/** What setupBooking started (tests wait on the consumer): none of it in an `api` process. */
export interface BookingParts {
  /** The calendar result consumer; `undefined` in an `api` process (PROCESS_ROLE). */
  consumer?: Consumer;
}

/**
 * Wires routes, the outbox relay, the calendar result consumer and the retention job onto the runtime's
 * context (main.ts and in-process tests). Booking owns Bookings, their idempotency keys and its outbox;
 * publishes booking.* and calendar.created/failed, consumes calendar-sync's results.
 *
 * PROCESS_ROLE (ctx.runs): the API is the routes with their slot checker and group commit of creates; the
 * background work is the outbox relay (woken by the NOTIFY each create's outbox row sends, so an `api`
 * process's rows reach a `worker`'s relay), the calendar result consumer and the retention job. The API
 * keeps nothing in memory that the consumer changes: every answer reads Postgres.
 */
export function setupBooking(ctx: ServiceContext<BookingConfig>, opts: SetupOptions = {}): BookingParts {
  const { config } = ctx;
  const clock = opts.clock ?? (() => new Date());
  if (ctx.runs.api) {
    const slots = createSlotChecker({
      baseUrl: config.AVAILABILITY_URL,
      timeoutMs: config.SLOT_CHECK_TIMEOUT_MS,
      logger: ctx.logger,
      signer: ctx.signer,
      batchesInFlight: config.SLOT_CHECK_BATCHES_IN_FLIGHT,
      batchMax: config.SLOT_CHECK_BATCH_MAX,
    });
    ctx.onStop('availability client', () => slots.close());
    const creates = bookingCreates({
      pool: ctx.pool,
      outboxChannel: outboxChannel(outboxSchemaName(outbox)),
      maxInFlight: config.CREATE_BATCHES_IN_FLIGHT,
      maxBatch: config.CREATE_BATCH_MAX,
    });
    registerBookingRoutes(ctx.http, {
      db: ctx.db,
      slots,
      create: { slots, creates: opts.wrapCreates?.(creates) ?? creates, clock },
      cursors: createCursorCodec(config.CURSOR_SECRET),
      clock,
    });
  }

  let consumer: Consumer | undefined;
  if (ctx.runs.background) {
    const relay = startOutboxRelay({ pool: ctx.pool, table: outbox, broker: ctx.broker, logger: ctx.logger });
    ctx.onStop('outbox relay', () => relay.stop());
    const results = startConsumer({
      broker: ctx.broker,
      db: ctx.db,
      inbox,
      service: 'booking',
      bindings: CALENDAR_RESULT_BINDINGS,
      handler: calendarResultHandler({ logger: ctx.logger, clock }),
      batch: true, // the handler's effects are statements in tx (booking row, outbox): results waiting together share a transaction
      logger: ctx.logger,
    });
    ctx.onStop('calendar result consumer', () => results.stop());
    consumer = results;
    startRetention(ctx, bookingRetentionRules(config));
  }
  return { consumer };
}
