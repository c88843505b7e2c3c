import { DomainError, ERROR_STATUS, parseRetryAfterSeconds, type ErrorCode } from '@sched/contracts';
import type { InternalResponse } from '@sched/http';

function isErrorCode(v: unknown): v is ErrorCode {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, v);
}

/**
 * Another service's error answer as the same DomainError (code, message, details, Retry-After), so the
 * page sees booking's `slot_unavailable` or availability's `calendar_unavailable` unchanged. An answer
 * that is not our error envelope is a fault of that service: 502.
 */
export function answerError(res: InternalResponse<unknown>): DomainError {
  const error = (res.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (!error || !isErrorCode(error.code) || ERROR_STATUS[error.code] !== res.status) {
    return new DomainError('upstream_unavailable', { status: 502 });
  }
  return new DomainError(error.code, {
    message: typeof error.message === 'string' ? error.message : undefined,
    details: Array.isArray(error.details) ? (error.details as DomainError['details']) : [],
    retryAfterSeconds: parseRetryAfterSeconds(res.headers['retry-after']),
  });
}
