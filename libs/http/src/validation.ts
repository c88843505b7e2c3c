import type { FastRequest } from './fast-path';
import { z } from 'zod';
import { DomainError, type ErrorDetail } from '@sched/contracts';

type Issue = z.core.$ZodIssue;

/** A route without a query takes none: any parameter is 400 unknown_field (decisions.md §1). */
export const NO_QUERY = z.strictObject({});
/** A route without a body takes none, or `{}`: any field is 400 unknown_field. */
export const NO_BODY = z.strictObject({}).optional();
type PathKey = PropertyKey;

const LENGTH_ORIGINS = new Set(['string', 'array', 'set', 'file']);

function dotted(path: readonly PathKey[], label: string): string {
  return path.length === 0 ? label : path.map(String).join('.');
}

function valueAt(input: unknown, path: readonly PathKey[]): unknown {
  let cur = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/** A schema may name its own issue word: `ctx.addIssue({ code: 'custom', params: { issue: 'xyz' } })`. */
function customIssueWord(issue: Issue): string {
  const word = issue.code === 'custom' ? (issue.params as { issue?: unknown } | undefined)?.issue : undefined;
  return typeof word === 'string' ? word : 'invalid_value';
}

/** The issue words of decisions.md §2 for one zod issue (other than unknown keys). */
function issueWord(issue: Issue, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      return valueAt(input, issue.path) === undefined ? 'required' : 'invalid_type';
    case 'too_big':
      return LENGTH_ORIGINS.has(issue.origin) ? 'too_long' : 'out_of_range';
    case 'too_small':
      return LENGTH_ORIGINS.has(issue.origin) ? 'too_short' : 'out_of_range';
    case 'invalid_format':
      return 'invalid_format';
    case 'custom':
      return customIssueWord(issue);
    default:
      // invalid_value (enum/literal), invalid_union, not_multiple_of, invalid_key, invalid_element.
      return 'invalid_value';
  }
}

/** Maps zod issues to `{field, issue}` details: dotted paths, one detail per unknown key, no duplicates. */
export function issuesToDetails(issues: readonly Issue[], input: unknown, rootLabel = 'body'): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  const add = (field: string, issue: string) => {
    const key = `${field}\u0000${issue}`;
    if (!seen.has(key)) details.push({ field, issue });
    seen.add(key);
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(dotted([...issue.path, key], rootLabel), 'unknown_field');
    } else {
      add(dotted(issue.path, rootLabel), issueWord(issue, input));
    }
  }
  return details;
}

function parseWith<S extends z.ZodType>(schema: S, input: unknown, rootLabel: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new DomainError('invalid_request', { details: issuesToDetails(result.error.issues, input, rootLabel) });
}

/** Validates `req.body` (undefined when no body was sent); 400 invalid_request with details on failure. */
export function parseBody<S extends z.ZodType>(schema: S, req: Pick<FastRequest, 'body'>): z.output<S> {
  return parseWith(schema, req.body, 'body');
}

/**
 * Validates the query string, read from the raw URL so the result does not depend on the app's query
 * parser setting. A parameter given twice is ambiguous and rejected rather than silently picking one.
 */
export function parseQuery<S extends z.ZodType>(schema: S, req: Pick<FastRequest, 'url' | 'originalUrl'>): z.output<S> {
  const search = new URLSearchParams((req.originalUrl ?? req.url ?? '').split('?')[1] ?? '');
  // A Map, then fromEntries: a key like `__proto__` becomes a plain own property, not a prototype.
  const query = new Map<string, string>();
  const duplicates = new Set<string>();
  for (const [key, value] of search) {
    if (query.has(key)) duplicates.add(key);
    else query.set(key, value);
  }
  if (duplicates.size > 0) {
    throw new DomainError('invalid_request', { details: [...duplicates].map((field) => ({ field, issue: 'duplicate' })) });
  }
  return parseWith(schema, Object.fromEntries(query), 'query');
}

/** Validates path parameters (strings as matched by the route pattern). */
export function parseParams<S extends z.ZodType>(schema: S, req: Pick<FastRequest, 'params'>): z.output<S> {
  return parseWith(schema, { ...req.params }, 'params');
}
