import { z } from 'zod';
import { publicEventKindSchema } from '../../event-kinds';
import { addIssue } from '../../issues';
import { cursorSchema, limitQuerySchema } from '../../pagination';
import { httpUrlSchema, referenceIdSchema } from '../fields';

/** Non-empty list of public event kinds, each at most once. */
export const eventKindListSchema = z
  .array(publicEventKindSchema)
  .min(1)
  .superRefine((kinds, ctx) => {
    const seen = new Set<string>();
    kinds.forEach((k, i) => {
      if (seen.has(k)) addIssue(ctx, 'duplicate', 'Each event kind may appear once.', [i]);
      seen.add(k);
    });
  });

/** Body of POST /admin/v1/workspaces/{ws}/webhook-endpoints. Public-address checks need DNS and live in the service. */
export const createWebhookEndpointBodySchema = z
  .strictObject({
    url: httpUrlSchema.meta({ description: 'Receiver URL; in production mode it must resolve to public addresses only.' }),
    events: eventKindListSchema,
  })
  .meta({ id: 'AdminCreateWebhookEndpointRequest', description: 'Body of POST /admin/v1/workspaces/{ws}/webhook-endpoints.' });

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
export const webhookDeliveryStatusSchema = z
  .enum(WEBHOOK_DELIVERY_STATUSES)
  .meta({ id: 'WebhookDeliveryStatus', description: 'pending (not yet delivered, retries left), succeeded, failed (dead-lettered).' });

/** Query of GET /admin/v1/workspaces/{ws}/webhook-deliveries. */
export const listWebhookDeliveriesQuerySchema = z
  .strictObject({
    status: webhookDeliveryStatusSchema.optional(),
    endpoint_id: referenceIdSchema('Only deliveries to this webhook endpoint.').optional(),
    cursor: cursorSchema.optional(),
    limit: limitQuerySchema.optional(),
  })
  .meta({ id: 'AdminListWebhookDeliveriesQuery', description: 'Query of GET /admin/v1/workspaces/{ws}/webhook-deliveries.' });

export type CreateWebhookEndpointBody = z.infer<typeof createWebhookEndpointBodySchema>;
export type ListWebhookDeliveriesQuery = z.infer<typeof listWebhookDeliveriesQuerySchema>;
