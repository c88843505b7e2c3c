import { z } from 'zod';
import { addIssue } from '../../issues';
import { scopeSchema } from '../../scopes';
import { timestampInputSchema } from '../../time';
import { NAME_MIN_LENGTH } from '../fields';

export const API_KEY_NAME_MAX_LENGTH = 120;
/** decisions.md §12: a key's own rate limit. */
export const RATE_LIMIT_BOUNDS = { limitMin: 1, limitMax: 100_000, windowSecondsMin: 1, windowSecondsMax: 3600 } as const;

export const rateLimitSchema = z
  .strictObject({
    limit: z.number().int().min(RATE_LIMIT_BOUNDS.limitMin).max(RATE_LIMIT_BOUNDS.limitMax),
    window_seconds: z.number().int().min(RATE_LIMIT_BOUNDS.windowSecondsMin).max(RATE_LIMIT_BOUNDS.windowSecondsMax),
  })
  .meta({ id: 'RateLimit', description: 'Requests allowed per window: limit 1 to 100000, window_seconds 1 to 3600.' });

/** Non-empty list of known scopes, each at most once (a repeat is `duplicate` at its index). */
export const scopeListSchema = z
  .array(scopeSchema)
  .min(1)
  .superRefine((scopes, ctx) => {
    const seen = new Set<string>();
    scopes.forEach((s, i) => {
      if (seen.has(s)) addIssue(ctx, 'duplicate', 'Each scope may appear once.', [i]);
      seen.add(s);
    });
  });

/** Body of POST /admin/v1/workspaces/{ws}/api-keys. `expires_at` in the future is checked by the gateway's clock. */
export const createApiKeyBodySchema = z
  .strictObject({
    name: z.string().min(NAME_MIN_LENGTH).max(API_KEY_NAME_MAX_LENGTH),
    scopes: scopeListSchema,
    expires_at: timestampInputSchema.nullable().optional(),
    rate_limit: rateLimitSchema.nullable().optional(),
  })
  .meta({ id: 'AdminCreateApiKeyRequest', description: 'Body of POST /admin/v1/workspaces/{ws}/api-keys.' });

export type RateLimit = z.infer<typeof rateLimitSchema>;
export type CreateApiKeyBody = z.infer<typeof createApiKeyBodySchema>;
