import type { Logger } from '@sched/logger';
import { outboxChannel, outboxSchemaName, startConsumer, startOutboxRelay, type Consumer } from '@sched/messaging';
import { createCursorCodec } from '@sched/pagination';
import { runService, startRetention, type RunningService } from '@sched/runtime';
import type { BookingConfig } from './config';
import { CALENDAR_RESULT_BINDINGS, calendarResultHandler } from './events/calendar-result.handler';
import { BOOKING_ACCESS } from './http/access';
import { createSlotChecker } from './http/availability.client';
import { registerBookingRoutes } from './http/booking.routes';
import type { BookingCreates } from './domain/ports';
import { bookingCreates } from './store/create-batch.queries';
import { bookingRetentionRules } from './store/retention';
import { inbox, outbox } from './store/schema';

export interface StartBookingOptions {
  /** Processes: true (SIGTERM drains). In-process tests: false. */
  handleSignals?: boolean;
  logger?: Logger;
  clock?: () => Date;
  /**
   * Wraps the store of creates. For tests that inject a fault between the store and the answer (the crash
   * test kills the process after a commit, before the reply); production passes nothing.
   */
  wrapCreates?: (creates: BookingCreates) => BookingCreates;
}

/**
 * Owns Bookings, their idempotency keys and its outbox; publishes booking.* and calendar.created/failed,
 * consumes calendar-sync's results. The API never waits on the broker (brokerCritical false): events wait in
 * the outbox during a broker outage.
 */
export interface RunningBookingService extends RunningService<BookingConfig> {
  /** Resolves once the calendar result consumer is subscribed (tests publish only after that). */
  consumerReady(timeoutMs?: number): Promise<void>;
}

export async function startBookingService(config: Readonly<BookingConfig>, opts: StartBookingOptions = {}): Promise<RunningBookingService> {
  const clock = opts.clock ?? (() => new Date());
  let consumer: Consumer | undefined;
  const running = await runService({
    name: 'booking',
    config,
    brokerCritical: false,
    access: BOOKING_ACCESS,
    handleSignals: opts.handleSignals,
    logger: opts.logger,
    setup: (ctx) => {
      const slots = createSlotChecker({ baseUrl: config.AVAILABILITY_URL, timeoutMs: config.SLOT_CHECK_TIMEOUT_MS, logger: ctx.logger, signer: ctx.signer });
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

      const relay = startOutboxRelay({ pool: ctx.pool, table: outbox, broker: ctx.broker, logger: ctx.logger });
      ctx.onStop('outbox relay', () => relay.stop());
      const calendarResults = startConsumer({
        broker: ctx.broker,
        db: ctx.db,
        inbox,
        service: 'booking',
        bindings: CALENDAR_RESULT_BINDINGS,
        handler: calendarResultHandler({ logger: ctx.logger, clock }),
        logger: ctx.logger,
      });
      consumer = calendarResults;
      ctx.onStop('calendar result consumer', () => calendarResults.stop());
      startRetention(ctx, bookingRetentionRules(config));
    },
  });
  return { ...running, consumerReady: (timeoutMs) => consumer!.ready(timeoutMs) };
}
