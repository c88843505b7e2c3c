import { isPublicEventKind, PUBLIC_EVENT_KINDS } from '@sched/contracts';
import type { Db } from '@sched/db';
import type { Logger } from '@sched/logger';
import { startConsumer, type Broker, type Consumer } from '@sched/messaging';
import { inbox } from '../store/schema';
import { DISPATCH_SERVICE } from './dead-letter.publisher';
import { DELIVERY_DEAD_LETTER_TYPE } from './delivery-dead-letter.message';
import { handleDeliveryReplay } from './delivery-replay.handler';
import { handlePublicEvent } from './public-event.handler';

/**
 * The webhook-dispatch queue: bound to the public kinds; replayed dead letters of this service
 * arrive on it directly (through the default exchange), so they need no binding.
 */
export function startEventConsumer(opts: { broker: Broker; db: Db; logger: Logger; retryDelaysMs?: readonly number[] }): Consumer {
  const log = opts.logger;
  return startConsumer({
    broker: opts.broker,
    db: opts.db,
    inbox,
    service: DISPATCH_SERVICE,
    bindings: PUBLIC_EVENT_KINDS,
    retryDelaysMs: opts.retryDelaysMs,
    logger: log,
    handler: async (envelope, tx) => {
      if (envelope.type === DELIVERY_DEAD_LETTER_TYPE) return handleDeliveryReplay(tx, envelope, log);
      if (isPublicEventKind(envelope.type)) {
        const created = await handlePublicEvent(tx, envelope, envelope.type);
        log.debug('event consumed', { type: envelope.type, deliveries: created });
        return;
      }
      // Only a replayed dead letter of an unknown kind can get here; there is nothing to do with it.
      log.warn('message of an unknown type skipped', { type: envelope.type });
    },
  });
}
