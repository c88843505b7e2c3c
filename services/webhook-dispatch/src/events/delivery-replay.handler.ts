import type { DbTx } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { EventEnvelope } from '@sched/messaging';
import { requeueDeadLettered } from '../store/delivery.queries';
import { deliveryDeadLetterDataSchema } from './delivery-dead-letter.message';

/**
 * A dead-lettered delivery came back from the DLQ (on-call replayed it): re-queue that delivery
 * with the same webhook-id. Only while it is still failed from that very dead-lettering, so a
 * duplicate message, or one whose delivery already succeeded or was re-queued, changes nothing.
 */
export async function handleDeliveryReplay(tx: DbTx, envelope: EventEnvelope, log: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  const data = deliveryDeadLetterDataSchema.parse(envelope.data);
  const requeued = await requeueDeadLettered(tx, envelope.workspace_id, data.delivery_id, data.generation);
  if (requeued) log.info('dead-lettered delivery re-queued', { delivery_id: data.delivery_id, endpoint_id: data.endpoint_id });
  else log.warn('dead-letter replay changed nothing: delivery no longer failed from this dead-lettering, or its endpoint is disabled or gone', {
    delivery_id: data.delivery_id,
    endpoint_id: data.endpoint_id,
  });
}
