import { isPublicEventKind, PUBLIC_EVENT_KINDS, type PublicEventKind } from '@sched/contracts';
import type { Db } from '@sched/db';
import type { Logger } from '@sched/logger';
import { startConsumer, type Broker, type Consumer } from '@sched/messaging';
import type { EventIngest } from '../store/ingest-batch.queries';
import { inbox } from '../store/schema';
import { DISPATCH_SERVICE } from './dead-letter.publisher';
import { DELIVERY_DEAD_LETTER_TYPE } from './delivery-dead-letter.message';
import { handleDeliveryReplay } from './delivery-replay.handler';
import { handlePublicEvent } from './public-event.handler';

/**
 * The webhook-dispatch queue: bound to the public kinds; replayed dead letters of this service
 * arrive on it directly (through the default exchange), so they need no binding.
 */
export function startEventConsumer(opts: {
  broker: Broker;
  db: Db;
  logger: Logger;
  /**
   * Public events are written by the ingest statement (store/ingest-batch.queries.ts, on the pool
   * under `db`); the deliveries it claims for the delivery worker are sent at once.
   */
  ingest: EventIngest;
  retryDelaysMs?: readonly number[];
}): Consumer {
  const log = opts.logger;
  return startConsumer({
    broker: opts.broker,
    db: opts.db,
    inbox,
    service: DISPATCH_SERVICE,
    bindings: PUBLIC_EVENT_KINDS,
    retryDelaysMs: opts.retryDelaysMs,
    logger: log,
    // Public events write their inbox row themselves, in the one statement that records their
    // deliveries (atomic and safe to repeat): no transaction, one round trip.
    idempotent: {
      accepts: (envelope) => isPublicEventKind(envelope.type),
      handler: async (envelope) => {
        const { fresh, deliveries } = await handlePublicEvent(opts.ingest.ingest, envelope, envelope.type as PublicEventKind);
        if (!fresh) log.info('duplicate event skipped', { type: envelope.type });
        // winston formats (and redacts) a line before its level is checked: skip the work when debug is off.
        else if (log.isDebugEnabled()) log.debug('event consumed', { type: envelope.type, deliveries: deliveries.length });
      },
    },
    handler: async (envelope, tx) => {
      if (envelope.type === DELIVERY_DEAD_LETTER_TYPE) return handleDeliveryReplay(tx, envelope, log);
      // Only a replayed dead letter of an unknown kind can get here (public kinds take the path
      // above); there is nothing to do with it.
      log.warn('message of an unknown type skipped', { type: envelope.type });
    },
  });
}
