import type { ErrorCode, ErrorDetail } from '@sched/contracts';

/** `unexpected_response`: the answer was not the API's JSON envelope (a proxy page, a cut-off body). */
export type ApiErrorCode = ErrorCode | 'unexpected_response';

/** The API answered with an error envelope (decisions.md §2). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[];
  /** meta.request_id (or X-Request-Id): quote it when asking for support. */
  readonly requestId: string | null;
  /** Retry-After in seconds, when the API sent one (429, 503, 409 in progress). */
  readonly retryAfterSeconds: number | null;
  /** How many HTTP attempts were made, retries included. */
  readonly attempts: number;

  constructor(init: {
    code: ApiErrorCode;
    status: number;
    message: string;
    details?: ErrorDetail[];
    requestId?: string | null;
    retryAfterSeconds?: number | null;
    attempts: number;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.requestId = init.requestId ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.attempts = init.attempts;
  }
}

/** No answer: connection refused or reset, DNS failure, or the per-attempt timeout. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly timedOut: boolean;
  readonly attempts: number;

  constructor(message: string, init: { cause: unknown; timedOut: boolean; attempts: number }) {
    super(message, { cause: init.cause });
    this.timedOut = init.timedOut;
    this.attempts = init.attempts;
  }
}

/** A webhook delivery failed verification; do not trust or process it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
