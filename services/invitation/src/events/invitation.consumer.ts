import { BOOKING_CREATED_WITH_INVITATION } from '@sched/contracts';
import type { Db, DbTx } from '@sched/db';
import type { Logger } from '@sched/logger';
import { startConsumer, type Broker, type Consumer } from '@sched/messaging';
import type { UseLedger } from '../domain/ports';
import { inbox } from '../store/schema';
import { concernsAnInvitation, handleBookingCreated } from './booking-created.handler';

/**
 * The service's queue `invitation`, bound to the booking.created of Bookings made through an invitation
 * (routing key `booking.created.invitation`): uses are counted on creation, and booking publishes the
 * others as `booking.created.no_invitation`, which never reach this queue. The bare `booking.created` is
 * bound too, exactly: booking versions before qualified routing keys publish every Booking with it, so a
 * rolling upgrade in any order loses no invitation Booking; once every booking replica routes by
 * invitation, nothing is published with that key (docs/invitation.md "Events").
 */
export function startInvitationConsumer(opts: {
  broker: Broker;
  db: Db;
  logger: Logger;
  ledgerFor: (tx: DbTx) => UseLedger;
  now: () => Date;
  retryDelaysMs?: readonly number[];
}): Consumer {
  return startConsumer({
    broker: opts.broker,
    db: opts.db,
    inbox,
    service: 'invitation',
    bindings: [BOOKING_CREATED_WITH_INVITATION],
    exactBindings: ['booking.created'],
    retryDelaysMs: opts.retryDelaysMs,
    logger: opts.logger,
    // The guard behind the routing key: a message under the legacy key (or a wrong one) whose Booking was
    // made without an invitation is acknowledged with no transaction and no row.
    accepts: concernsAnInvitation,
    batch: true, // the ledger's writes are statements in tx: messages waiting together share a transaction
    handler: async (envelope, tx) => {
      const result = await handleBookingCreated(envelope, opts.ledgerFor, tx as DbTx, opts.now());
      if (result === 'over_limit') {
        opts.logger.warn('booking made with an invitation after its reservation lapsed; used_count stays at max_uses', { booking_event: envelope.id });
      } else if (result !== 'ignored') {
        opts.logger.debug('invitation use settled from booking.created', { result });
      }
    },
  });
}
