import { z } from 'zod';
import { addIssue } from '../../issues';
import { httpUrlSchema } from '../fields';
import { eventKindListSchema } from './webhooks';

/**
 * Body of PATCH /admin/v1/workspaces/{ws}/webhook-endpoints/{whe}: any of url, events, enabled, at
 * least one. The secret is not writable here (rotate-secret makes a new one).
 */
export const patchWebhookEndpointBodySchema = z
  .strictObject({
    url: httpUrlSchema.optional(),
    events: eventKindListSchema.optional(),
    enabled: z.boolean().optional().meta({ description: 'false stops deliveries (pending ones fail); true resumes new ones.' }),
  })
  .superRefine((b, ctx) => {
    if (Object.keys(b).length === 0) addIssue(ctx, 'required', 'At least one field is required.');
  })
  .meta({ id: 'AdminPatchWebhookEndpointRequest', description: 'Body of PATCH /admin/v1/workspaces/{ws}/webhook-endpoints/{whe}.' });

export type PatchWebhookEndpointBody = z.infer<typeof patchWebhookEndpointBodySchema>;
