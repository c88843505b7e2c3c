import type { z } from 'zod';

/**
 * Issue words used in error `details` (decisions.md §2). Built-in zod issues are mapped to the
 * first eight by @sched/http; the rest come from custom issues raised here with `params.issue`,
 * which wins over the default mapping.
 */
export const ISSUE_WORDS = [
  'required',
  'too_long',
  'too_short',
  'out_of_range',
  'invalid_format',
  'invalid_type',
  'unknown_field',
  'invalid_value',
  'duplicate',
  'overlap',
  'conflict',
  'too_many_keys',
  'key_too_long',
  'key_too_short',
  'too_large',
  'too_deep',
] as const;
export type IssueWord = (typeof ISSUE_WORDS)[number];

/** Adds a custom issue whose `params.issue` carries the issue word for error details. */
export function addIssue(ctx: z.RefinementCtx, issue: IssueWord, message: string, path: PropertyKey[] = []): void {
  ctx.addIssue({ code: 'custom', message, path, params: { issue } });
}

/** Same as addIssue, for `.check()` callbacks that receive the raw payload. */
export function pushIssue(
  payload: { value: unknown; issues: z.core.$ZodRawIssue[] },
  issue: IssueWord,
  message: string,
  path: PropertyKey[] = [],
): void {
  payload.issues.push({ code: 'custom', message, path, input: payload.value, params: { issue } });
}
