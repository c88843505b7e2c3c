import { isPublicEventKind, PUBLIC_EVENT_KINDS, type PublicEventKind } from '@sched/contracts';
import type { Db } from '@sched/db';
import type { Logger } from '@sched/logger';
import { startConsumer, type Broker, type Consumer } from '@sched/messaging';
import type { IngestClaims } from '../delivery/delivery.worker';
import type { Queryable } from '../store/ingest.queries';
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
  /** The pool under `db`: public events run their one named statement on it (store/ingest.queries.ts). */
  pool: Queryable;
  logger: Logger;
  /** The delivery worker's: deliveries claimed while an event is consumed are sent at once. */
  claims: IngestClaims;
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
        const { fresh, deliveries } = await handlePublicEvent(opts.pool, envelope, envelope.type as PublicEventKind, opts.claims);
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
