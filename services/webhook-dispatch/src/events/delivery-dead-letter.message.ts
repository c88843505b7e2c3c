import { createHash } from 'node:crypto';
import { z } from 'zod';
import { idSchema, publicEventKindSchema } from '@sched/contracts';

/**
 * The message this service puts in its own DLQ when a delivery fails for good. It never travels on
 * the events exchange: it is published straight to `<prefix>webhook-dispatch.dlq`, and only comes to
 * the service queue when on-call replays the DLQ, where the consumer re-queues the delivery.
 */
export const DELIVERY_DEAD_LETTER_TYPE = 'webhook_delivery.failed';
/** Header naming the delivery, for people reading the DLQ with RabbitMQ tools. */
export const DELIVERY_ID_HEADER = 'x-delivery-id';

export const deliveryDeadLetterDataSchema = z.strictObject({
  delivery_id: idSchema('whd'),
  endpoint_id: idSchema('whe'),
  event_id: idSchema('wev'),
  event_type: publicEventKindSchema,
  /** The delivery's dead_letter_count when this message was made: a replay re-queues only that failure. */
  generation: z.number().int().min(1),
  attempts: z.number().int().min(0),
  last_error: z.string().nullable(),
});

export type DeliveryDeadLetterData = z.infer<typeof deliveryDeadLetterDataSchema>;

/**
 * A `wev_` id derived from delivery and generation: publishing the same dead-lettering twice (a
 * crash before the broker's confirm was recorded) gives the same id, which the inbox absorbs; a new
 * failure after a replay gives a new id, which the inbox has not seen and so handles again.
 */
export function deadLetterMessageId(deliveryId: string, generation: number): string {
  const digest = createHash('sha256').update(`${deliveryId}:${generation}`).digest('base64url');
  return `wev_${digest.slice(0, 22)}`;
}
