import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from './errors';

/**
 * Success and error envelopes (api-v1.md "Response envelope", decisions.md §2). The helpers make
 * a fresh schema on each call and so set no id; named instances live in responses.ts.
 */
export const requestMetaSchema = z
  .strictObject({ request_id: z.string() })
  .meta({ id: 'ResponseMeta', description: 'meta of every response; request_id equals the X-Request-Id header.' });

export const listMetaSchema = z
  .strictObject({
    request_id: z.string(),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'ListMeta', description: 'meta of a paged list; next_cursor is null on the last page.' });

export function dataEnvelope<T extends z.ZodType>(data: T) {
  return z.strictObject({ data, meta: requestMetaSchema });
}

export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.strictObject({ data: z.array(item), meta: listMetaSchema });
}

export const errorDetailSchema = z
  .strictObject({ field: z.string(), issue: z.string() })
  .meta({ id: 'ErrorDetail', description: 'A broken rule: dotted field path and an issue word.' });

export const errorEnvelopeSchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.array(errorDetailSchema),
    }),
    meta: requestMetaSchema,
  })
  .meta({ id: 'ErrorResponse', description: 'Body of every error response.' });

export type RequestMeta = z.infer<typeof requestMetaSchema>;
export type ListMeta = z.infer<typeof listMetaSchema>;
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
