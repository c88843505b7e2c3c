import { createInternalClient } from '@sched/http';
import { createCursorCodec } from '@sched/pagination';
import { registerSecretsRoutes, startRetention, type ServiceContext } from '@sched/runtime';
import { SEALED_COLUMNS } from './store/sealed-columns';
import { secretBoxFromEnv } from '@sched/secrets';
import type { InvitationConfig } from './config';
import { startInvitationConsumer } from './events/invitation.consumer';
import { createAvailabilityClient } from './http/availability.client';
import { createBookingClient } from './http/booking.client';
import { registerInvitationRoutes } from './http/invitation.routes';
import { registerPageRoutes } from './http/page.routes';
import { createInvitationStore } from './store/invitation.queries';
import { invitationRetentionRules } from './store/retention';
import { createUseLedger } from './store/use-ledger.queries';

export interface SetupOptions {
  /** The clock of every status decision; tests fix it to hit the exact edges. */
  now?: () => Date;
  /** Consumer retry delays; tests shorten them. */
  retryDelaysMs?: readonly number[];
}

/**
 * Wires routes, the booking.created consumer and the retention job (main.ts and in-process tests).
 *
 * PROCESS_ROLE (ctx.runs): the API is the management routes and the booking page's backend (with its
 * clients of availability and booking); the background work is the booking.created consumer (it records
 * a page Booking's use of its invitation in the use ledger) and the retention job. Nothing is kept in
 * memory between them: the page's answers read the ledger in Postgres, which the consumer writes.
 */
export function setupInvitation(ctx: ServiceContext<InvitationConfig>, opts: SetupOptions = {}): void {
  const { config, db, logger } = ctx;
  const now = opts.now ?? (() => new Date());

  if (ctx.runs.api) {
    const secretBox = secretBoxFromEnv(config);
    const availabilityHttp = createInternalClient({ baseUrl: config.AVAILABILITY_URL, service: 'availability', timeoutMs: config.AVAILABILITY_TIMEOUT_MS, retries: 1, signer: ctx.signer });
    ctx.onStop('availability client', () => availabilityHttp.close());
    const availability = createAvailabilityClient(availabilityHttp);
    const bookingHttp = createInternalClient({ baseUrl: config.BOOKING_URL, service: 'booking', timeoutMs: config.BOOKING_TIMEOUT_MS, signer: ctx.signer });
    ctx.onStop('booking client', () => bookingHttp.close());

    registerInvitationRoutes(ctx.http, {
      db,
      storeFor: createInvitationStore,
      eventTypes: availability,
      bookingPageUrl: config.BOOKING_PAGE_URL,
      cursors: createCursorCodec(config.CURSOR_SECRET),
      secretBox,
      now,
    });
    registerSecretsRoutes(ctx.http, 'invitation', { pool: ctx.pool, box: secretBox, columns: SEALED_COLUMNS });
    registerPageRoutes(ctx.http, {
      db,
      ledger: createUseLedger(db),
      eventTypes: availability,
      slots: availability,
      bookings: createBookingClient(bookingHttp),
      reservationTtlMs: config.RESERVATION_TTL_MS,
      log: logger,
      now,
    });
  }

  if (ctx.runs.background) {
    const consumer = startInvitationConsumer({ broker: ctx.broker, db, logger, ledgerFor: createUseLedger, now, retryDelaysMs: opts.retryDelaysMs });
    ctx.onStop('invitation consumer', () => consumer.stop());
    startRetention(ctx, invitationRetentionRules(config));
  }
}
