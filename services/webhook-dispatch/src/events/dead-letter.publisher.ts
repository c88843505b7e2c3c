import { createDeadLetterPublisher, type Broker, type EventEnvelope } from '@sched/messaging';
import type { DeadLetterDue } from '../store/delivery-worker.queries';
import { DELIVERY_DEAD_LETTER_TYPE, DELIVERY_ID_HEADER, deadLetterMessageId, type DeliveryDeadLetterData } from './delivery-dead-letter.message';

export interface DeliveryDeadLetterPublisher {
  /** Resolves once the broker confirmed the message in `<prefix><service>.dlq`. One at a time. */
  publish(d: DeadLetterDue): Promise<void>;
  close(): Promise<void>;
}

export const DISPATCH_SERVICE = 'webhook-dispatch';

export function deadLetterEnvelope(d: DeadLetterDue): EventEnvelope<typeof DELIVERY_DEAD_LETTER_TYPE, DeliveryDeadLetterData> {
  return {
    id: deadLetterMessageId(d.id, d.generation),
    type: DELIVERY_DEAD_LETTER_TYPE,
    occurred_at: d.failedAt.toISOString(),
    workspace_id: d.workspaceId,
    schema_version: 1,
    data: {
      delivery_id: d.id,
      endpoint_id: d.endpointId,
      event_id: d.eventId,
      event_type: d.eventType as DeliveryDeadLetterData['event_type'],
      generation: d.generation,
      attempts: d.attemptCount,
      last_error: d.lastError,
    },
  };
}

/** A failed delivery into this service's DLQ, with its delivery id for the replay handler. */
export function createDeliveryDeadLetterPublisher(broker: Broker): DeliveryDeadLetterPublisher {
  const publisher = createDeadLetterPublisher(broker, DISPATCH_SERVICE);
  return {
    publish: (d) =>
      publisher.publish(deadLetterEnvelope(d), {
        attempts: d.attemptCount,
        lastError: d.lastError,
        firstFailedAt: d.firstAttemptAt ?? d.failedAt,
        headers: { [DELIVERY_ID_HEADER]: d.id },
      }),
    close: () => publisher.close(),
  };
}
