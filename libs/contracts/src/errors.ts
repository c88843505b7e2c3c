/**
 * Error codes and their HTTP statuses, decisions.md §2. Domain code throws DomainError with one of
 * these codes; the HTTP edge (@sched/http) maps it to the status and the error envelope.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  insufficient_scope: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  slot_unavailable: 409,
  version_conflict: 409,
  booking_cancelled: 409,
  event_type_not_bookable: 409,
  invitation_not_active: 409,
  idempotency_request_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  invalid_reference: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_unavailable: 502,
  calendar_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export interface ErrorDetail {
  field: string;
  issue: string;
}

/** Default human messages: never echo an identifier or an internal (decisions.md §2). */
export const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  invalid_request: 'The request is invalid.',
  unauthenticated: 'A valid API key is required.',
  insufficient_scope: 'The API key lacks the scope this operation needs.',
  forbidden: 'This caller may not make this request.',
  not_found: 'The resource was not found.',
  method_not_allowed: 'The method is not allowed on this path.',
  slot_unavailable: 'The requested start is not an available slot.',
  version_conflict: 'The expected version does not match the current version.',
  booking_cancelled: 'The booking is cancelled.',
  event_type_not_bookable: 'The event type is not bookable.',
  invitation_not_active: 'The invitation is not active.',
  idempotency_request_in_progress: 'A request with this idempotency key is still in progress.',
  payload_too_large: 'The request body is too large.',
  unsupported_media_type: 'The request body must be JSON.',
  idempotency_key_reused: 'The idempotency key was used with a different request.',
  invalid_reference: 'The request refers to a resource that cannot be used here.',
  rate_limited: 'Too many requests.',
  internal_error: 'An internal error occurred.',
  upstream_unavailable: 'A service is temporarily unavailable.',
  calendar_unavailable: 'The calendar provider is unavailable; try again later.',
  service_unavailable: 'The service is temporarily unavailable; try again later.',
};

/** A rule of the contract was broken. Carries no HTTP knowledge beyond the code. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  /** Seconds a caller should wait before retrying (429, 503, 409 in progress). */
  readonly retryAfterSeconds?: number;
  /** Optional status override within the code's family (e.g. 504 for an upstream timeout). */
  readonly status?: number;

  constructor(code: ErrorCode, opts: { message?: string; details?: ErrorDetail[]; retryAfterSeconds?: number; status?: number } = {}) {
    super(opts.message ?? DEFAULT_MESSAGES[code]);
    this.name = 'DomainError';
    this.code = code;
    this.details = opts.details ?? [];
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.status = opts.status;
  }
}

export function isDomainError(e: unknown): e is DomainError {
  return e instanceof DomainError;
}
