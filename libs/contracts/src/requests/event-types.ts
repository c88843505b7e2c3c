import { z } from 'zod';
import type { ErrorDetail } from '../errors';
import { cursorSchema, limitBodySchema, limitQuerySchema } from '../pagination';

/**
 * GET /v1/event-types: api-v1.md puts cursor/limit in an optional JSON body; decisions.md §5 also
 * accepts them as query parameters. Parse each with its schema, then combine with
 * combineEventTypesListParams.
 */
export const listEventTypesQuerySchema = z
  .strictObject({
    cursor: cursorSchema.optional(),
    limit: limitQuerySchema.optional(),
  })
  .meta({ id: 'ListEventTypesQuery', description: 'Query parameters of GET /v1/event-types (alternative to the body).' });

/** The optional JSON body of GET /v1/event-types; no body at all is the same as `{}`. */
export const listEventTypesBodySchema = z
  .strictObject({
    cursor: cursorSchema.optional(),
    limit: limitBodySchema.optional(),
  })
  .meta({ id: 'ListEventTypesBody', description: 'Optional JSON body of GET /v1/event-types.' });

export type ListEventTypesQuery = z.infer<typeof listEventTypesQuerySchema>;
export type ListEventTypesBody = z.infer<typeof listEventTypesBodySchema>;
export interface ListEventTypesParams {
  cursor?: string;
  limit?: number;
}

/**
 * Merges the two places. A parameter given in both with different values is refused with
 * `{field, issue: "conflict"}` rather than silently preferring one.
 */
export function combineEventTypesListParams(
  query: ListEventTypesQuery,
  body: ListEventTypesBody | undefined,
): { ok: true; value: ListEventTypesParams } | { ok: false; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const value: ListEventTypesParams = {};
  for (const field of ['cursor', 'limit'] as const) {
    const q = query[field];
    const b = body?.[field];
    if (q !== undefined && b !== undefined && q !== b) details.push({ field, issue: 'conflict' });
    const v = q ?? b;
    if (v !== undefined) (value as Record<string, unknown>)[field] = v;
  }
  return details.length > 0 ? { ok: false, details } : { ok: true, value };
}
