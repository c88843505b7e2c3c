import { ERROR_STATUS, type ErrorCode } from '@sched/contracts';
import { componentRef, type JsonSchema } from './schema-components';

/** When each code is returned (decisions.md §2), for the response descriptions. */
const WHEN: Record<ErrorCode, string> = {
  invalid_request: 'a rule of the contract is broken (length, range, format, required-together, unknown field or query parameter, bad JSON, bad cursor, bad Idempotency-Key)',
  unauthenticated: 'missing, malformed, unknown, revoked or expired key',
  insufficient_scope: 'the key lacks the scope; details: [{field: "scope", issue: "<scope needed>"}]',
  forbidden: 'internal only: the calling service or principal may not call this route (docs/security.md); never answered to a client of the gateway',
  not_found: 'unknown id, or an id of another workspace (identical answers)',
  method_not_allowed: 'method not defined on a known path',
  slot_unavailable: 'start_at is not (or no longer) a bookable Slot',
  version_conflict: 'expected_version differs; details: [{field: "expected_version", issue: "current_version_N"}]',
  booking_cancelled: 'the Booking is cancelled',
  event_type_not_bookable: 'the Event Type is not bookable (see its unavailable_reason)',
  invitation_not_active: 'reissue of a revoked, expired or exhausted invitation, or revoke of a revoked one',
  idempotency_request_in_progress: 'a request with the same Idempotency-Key is still executing; Retry-After: 1',
  payload_too_large: 'body over 64 KiB',
  unsupported_media_type: 'a body that is not JSON',
  idempotency_key_reused: 'the same Idempotency-Key was used with a different request',
  invalid_reference: 'the body names an Event Type that does not exist in this workspace (or, for an invitation, is not invitation-only)',
  rate_limited: 'too many requests for this key; see Retry-After and RateLimit-*',
  internal_error: 'an unexpected failure; safe to retry with the same Idempotency-Key',
  upstream_unavailable: 'the gateway could not reach a service in time (502, or 504 on a timeout)',
  calendar_unavailable: 'the calendar provider cannot be read and no recent snapshot exists (fails closed); Retry-After',
  service_unavailable: 'a store the request needs (the database, or the message broker where the request publishes) is unreachable; Retry-After',
};

const REASON: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface OperationTraits {
  /** Takes an Idempotency-Key (every v1 POST): idempotency conflicts. */
  mutating: boolean;
  /** Needs an API key scope (v1; default true): 403. */
  scoped?: boolean;
  /** Counted by the per-key rate limit (v1; default true): 429. */
  rateLimited?: boolean;
  /** The path names one resource (404 for an unknown or foreign id). */
  hasResourceId: boolean;
  /** The request may carry a JSON body (413/415 possible). */
  acceptsBody: boolean;
  /** Operation-specific 409/422/503 codes (decisions.md §2 "When"). */
  conflicts?: ErrorCode[];
  unprocessable?: ErrorCode[];
  failsClosed?: boolean;
}

/**
 * The error codes an operation can answer with, grouped by status, in the order of checks of
 * decisions.md §2. 405 is left out: it answers methods that have no operation.
 */
export function errorCodesByStatus(t: OperationTraits): Map<number, ErrorCode[]> {
  const codes: ErrorCode[] = ['invalid_request', 'unauthenticated'];
  if (t.scoped ?? true) codes.push('insufficient_scope');
  if (t.acceptsBody) codes.push('payload_too_large', 'unsupported_media_type');
  if (t.hasResourceId) codes.push('not_found');
  codes.push(...(t.conflicts ?? []));
  if (t.mutating) codes.push('idempotency_request_in_progress', 'idempotency_key_reused');
  codes.push(...(t.unprocessable ?? []));
  if (t.rateLimited ?? true) codes.push('rate_limited');
  codes.push('internal_error', 'upstream_unavailable');
  if (t.failsClosed) codes.push('calendar_unavailable');
  // Every operation needs a store (the gateway's keys, the owning service's database).
  codes.push('service_unavailable');

  const byStatus = new Map<number, ErrorCode[]>();
  const add = (status: number, code: ErrorCode) => byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  for (const code of codes) {
    add(ERROR_STATUS[code], code);
    if (code === 'upstream_unavailable') add(504, code); // decisions.md §2: 502/504
  }
  return new Map([...byStatus.entries()].sort(([a], [b]) => a - b));
}

export function reasonPhrase(status: number): string {
  return REASON[status] ?? `HTTP ${status}`;
}

/** The error envelope narrowed to the codes of one status, so a validator checks the code too. */
export function errorBodySchema(codes: ErrorCode[]): JsonSchema {
  return {
    allOf: [
      componentRef('ErrorResponse'),
      { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } },
    ],
  };
}

export function errorDescription(status: number, codes: ErrorCode[]): string {
  return [`${reasonPhrase(status)}. Error envelope with code:`, ...codes.map((c) => `- \`${c}\`: ${WHEN[c]}`)].join('\n');
}
