import type { Db, DbTx } from '@sched/db';
import type { Logger } from '@sched/logger';
import { startConsumer, type Broker, type Consumer } from '@sched/messaging';
import type { UseLedger } from '../domain/ports';
import { inbox } from '../store/schema';
import { concernsAnInvitation, handleBookingCreated } from './booking-created.handler';

/** The service's queue `invitation`, bound to booking.created only (uses are counted on creation). */
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
    bindings: ['booking.created'],
    retryDelaysMs: opts.retryDelaysMs,
    logger: opts.logger,
    // Most Bookings are made without an invitation: those need no transaction here at all.
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
