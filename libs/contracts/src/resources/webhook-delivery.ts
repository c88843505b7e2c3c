import { z } from 'zod';
import { publicEventKindSchema } from '../event-kinds';
import { idSchema } from '../ids';
import { webhookDeliveryStatusSchema } from '../requests/admin/webhooks';
import { timestampSchema } from '../time';

/** Why one attempt did not succeed (null when it got a 2xx). */
export const WEBHOOK_ATTEMPT_ERROR_KINDS = [
  'http_status',
  'redirect',
  'timeout',
  'connection',
  'dns',
  'address_not_allowed',
  'url_not_allowed',
] as const;
export type WebhookAttemptErrorKind = (typeof WEBHOOK_ATTEMPT_ERROR_KINDS)[number];

export const webhookAttemptSchema = z
  .strictObject({
    number: z.number().int().min(1).meta({ description: '1 for the first attempt of the delivery, counting across replays.' }),
    attempted_at: timestampSchema,
    status_code: z.number().int().nullable().meta({ description: 'HTTP status the receiver answered; null when no answer came.' }),
    latency_ms: z.number().int().min(0),
    error_kind: z.enum(WEBHOOK_ATTEMPT_ERROR_KINDS).nullable(),
    error: z.string().nullable().meta({ description: 'Short description for on-call (never a secret or the response body).' }),
  })
  .meta({ id: 'AdminWebhookAttempt', description: 'One HTTP attempt of a webhook delivery.' });

export const webhookDeliverySchema = z
  .strictObject({
    id: idSchema('whd'),
    workspace_id: idSchema('wsp'),
    endpoint_id: idSchema('whe'),
    event_id: idSchema('wev').meta({ description: 'The webhook-id header of every attempt.' }),
    event_type: publicEventKindSchema,
    status: webhookDeliveryStatusSchema,
    attempt_count: z.number().int().min(0),
    next_attempt_at: timestampSchema.nullable(),
    last_error: z.string().nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
    succeeded_at: timestampSchema.nullable(),
    failed_at: timestampSchema.nullable(),
    attempts: z.array(webhookAttemptSchema).meta({ description: 'Attempts in order, at most the latest 50.' }),
  })
  .meta({ id: 'AdminWebhookDelivery', description: 'One event sent to one webhook endpoint, with its attempts.' });

export const webhookReplayResultSchema = z
  .strictObject({ requeued: z.number().int().min(0) })
  .meta({ id: 'AdminWebhookReplayResult', description: 'How many deliveries were put back in the queue.' });

export const deadLetterMessageSchema = z
  .strictObject({
    id: z.string().nullable(),
    type: z.string().nullable(),
    routing_key: z.string(),
    first_failed_at: z.string().nullable(),
    last_error: z.string().nullable(),
    attempts: z.number().int().min(0),
  })
  .meta({ id: 'AdminDeadLetterMessage', description: 'A dead-lettered message, summarised (never its body).' });

export const deadLetterQueueSchema = z
  .strictObject({
    service: z.string(),
    queue: z.string(),
    available: z.boolean().meta({ description: 'False when the queue does not exist yet (its service never started).' }),
    count: z.number().int().min(0),
    oldest: z.array(deadLetterMessageSchema),
  })
  .meta({ id: 'AdminDeadLetterQueue', description: "A service's dead-letter queue: count and oldest messages." });

export const deadLetterReplayResultSchema = z
  .strictObject({ service: z.string(), queue: z.string(), replayed: z.number().int().min(0) })
  .meta({ id: 'AdminDeadLetterReplayResult', description: 'How many dead letters were moved back to their queue.' });

export type WebhookAttempt = z.infer<typeof webhookAttemptSchema>;
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
export type DeadLetterQueue = z.infer<typeof deadLetterQueueSchema>;
