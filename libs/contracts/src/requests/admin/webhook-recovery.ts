import { z } from 'zod';
import { addIssue } from '../../issues';
import { queryIntSchema } from '../../pagination';
import { timestampInputSchema } from '../../time';
import { referenceIdSchema } from '../fields';

/** At most this many dead letters are peeked per queue by GET /admin/v1/dead-letters. */
export const DEAD_LETTER_PEEK_MAX = 100;
export const DEAD_LETTER_PEEK_DEFAULT = 10;

/**
 * Body of POST /admin/v1/workspaces/{ws}/webhook-deliveries/replay: re-queue every failed delivery to
 * one endpoint created in [from, to).
 */
export const replayWebhookDeliveriesBodySchema = z
  .strictObject({
    endpoint_id: referenceIdSchema('Webhook endpoint whose failed deliveries are re-queued.'),
    from: timestampInputSchema.meta({ description: 'Deliveries created at or after this instant.' }),
    to: timestampInputSchema.meta({ description: 'Deliveries created before this instant.' }),
  })
  .superRefine((b, ctx) => {
    if (b.from instanceof Date && b.to instanceof Date && b.to.getTime() <= b.from.getTime()) {
      addIssue(ctx, 'out_of_range', '`to` must be after `from`.', ['to']);
    }
  })
  .meta({ id: 'AdminReplayWebhookDeliveriesRequest', description: 'Body of POST /admin/v1/workspaces/{ws}/webhook-deliveries/replay.' });

/** Query of GET /admin/v1/dead-letters. */
export const listDeadLettersQuerySchema = z
  .strictObject({
    limit: queryIntSchema(0, DEAD_LETTER_PEEK_MAX)
      .optional()
      .meta({ description: 'Oldest messages shown per queue, 0 to 100; default 10.' }),
  })
  .meta({ id: 'AdminListDeadLettersQuery', description: 'Query of GET /admin/v1/dead-letters.' });

/** Optional body of POST /admin/v1/dead-letters/{queue}/replay. */
export const replayDeadLettersBodySchema = z
  .strictObject({
    max: z.number().int().min(1).max(100_000).optional().meta({ description: 'Replay at most this many; default all present now.' }),
  })
  .meta({ id: 'AdminReplayDeadLettersRequest', description: 'Optional body of POST /admin/v1/dead-letters/{queue}/replay.' });

export type ReplayWebhookDeliveriesBody = z.infer<typeof replayWebhookDeliveriesBodySchema>;
export type ListDeadLettersQuery = z.infer<typeof listDeadLettersQuerySchema>;
export type ReplayDeadLettersBody = z.infer<typeof replayDeadLettersBodySchema>;
