import type { ErrorCode } from '@sched/contracts';
import { errorBodySchema, errorDescription } from './error-responses';
import { headerRef, RESPONSE_HEADERS } from './headers';
import type { JsonSchema } from './schema-components';

export interface ResponseOptions {
  /** v1 answers carry RateLimit-*; the admin API has no per-key rate limit. */
  rateLimited: boolean;
  /** POST: a stored answer replayed under the same Idempotency-Key carries Idempotent-Replayed. */
  idempotent: boolean;
}

const REPLAYABLE_ERRORS = new Set([400, 404, 409, 422]);
const required = (name: string) => ({ ...RESPONSE_HEADERS[name], required: true });

function commonHeaders(status: number, o: ResponseOptions): Record<string, JsonSchema> {
  const headers: Record<string, JsonSchema> = { 'X-Request-Id': headerRef('X-Request-Id') };
  // The key is not known on a 401, so no counter applies to it.
  if (o.rateLimited && status !== 401) {
    for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) headers[h] = headerRef(h);
  }
  // decisions.md §4: the service stores 2xx and 4xx answers and replays them; the gateway's own
  // refusals (401, 403, 413, 415, 429) come before the key is looked at.
  if (o.idempotent && (status < 300 || REPLAYABLE_ERRORS.has(status))) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
  return headers;
}

export function successResponse(status: number, description: string, body: JsonSchema | null, o: ResponseOptions): JsonSchema {
  const response: JsonSchema = { description, headers: commonHeaders(status, o) };
  if (body) response.content = { 'application/json': { schema: body } };
  return response;
}

export function errorResponse(status: number, codes: ErrorCode[], o: ResponseOptions): JsonSchema {
  const headers = commonHeaders(status, o);
  if (status === 401) headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
  if (status === 429 || status === 503) headers['Retry-After'] = required('Retry-After');
  if (status === 409 && codes.includes('idempotency_request_in_progress')) headers['Retry-After'] = headerRef('Retry-After');
  return {
    description: errorDescription(status, codes),
    headers,
    content: { 'application/json': { schema: errorBodySchema(codes) } },
  };
}

/**
 * Error responses that many operations share (one code for the status) live once in
 * components.responses; a name stands for one response object only.
 */
export class SharedResponses {
  private readonly responses = new Map<string, JsonSchema>();

  ref(name: string, response: JsonSchema): JsonSchema {
    const known = this.responses.get(name);
    if (known && JSON.stringify(known) !== JSON.stringify(response)) throw new Error(`openapi: two different responses named ${name}`);
    this.responses.set(name, response);
    return { $ref: `#/components/responses/${name}` };
  }

  toObject(): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    for (const name of [...this.responses.keys()].sort()) out[name] = this.responses.get(name)!;
    return out;
  }
}

const pascal = (code: string) => code.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase());

function sharedName(status: number, code: ErrorCode, o: ResponseOptions): string {
  // upstream_unavailable answers 502, and 504 on a timeout.
  const base = pascal(code) + (status === 504 ? 'Timeout' : '');
  if (!o.rateLimited) return `Admin${base}`;
  return o.idempotent && REPLAYABLE_ERRORS.has(status) ? `${base}Replayable` : base;
}

export function errorResponses(byStatus: Map<number, ErrorCode[]>, o: ResponseOptions, shared: SharedResponses): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, codes] of byStatus) {
    const response = errorResponse(status, codes, o);
    out[String(status)] = codes.length === 1 ? shared.ref(sharedName(status, codes[0]!, o), response) : response;
  }
  return out;
}

/** `/v1/bookings/:booking` → `/v1/bookings/{booking}` and the names of its parameters. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}
