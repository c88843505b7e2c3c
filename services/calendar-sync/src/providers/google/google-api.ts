import { ProviderError } from '../../domain/calendar-provider';

/**
 * How a Google API request failed, read from what gaxios throws (a GaxiosError; read by shape, not
 * by class, so the exact gaxios copy under @googleapis/calendar does not matter). Google's error body:
 * `{error: {code, message, errors: [{domain, reason, message}], status}}`.
 */
export interface ApiFailure {
  /** HTTP status; null: no answer (refused, reset, timeout, aborted). */
  status: number | null;
  /** errors[0].reason, e.g. rateLimitExceeded, duplicate, notFound, deleted. */
  reason: string | null;
  message: string;
  /** Retry-After in ms (seconds or an HTTP date); null when absent or unreadable. */
  retryAfterMs: number | null;
}

interface ErrorLike {
  message?: unknown;
  status?: unknown;
  response?: { status?: unknown; data?: unknown; headers?: unknown };
}

function header(headers: unknown, name: string): string | null {
  if (!headers || typeof headers !== 'object') return null;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const v = (headers as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : null;
}

export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export function readFailure(err: unknown, now: number): ApiFailure {
  const e = (err ?? {}) as ErrorLike;
  const status = typeof e.response?.status === 'number' ? e.response.status : typeof e.status === 'number' ? e.status : null;
  const body = e.response?.data as { error?: { message?: unknown; errors?: Array<{ reason?: unknown }> } | string } | undefined;
  const apiError = body && typeof body === 'object' && typeof body.error === 'object' ? body.error : undefined;
  const reason = typeof apiError?.errors?.[0]?.reason === 'string' ? apiError.errors[0].reason : null;
  const message = typeof apiError?.message === 'string' ? apiError.message : typeof e.message === 'string' ? e.message : 'request failed';
  return { status, reason, message, retryAfterMs: status === null ? null : retryAfterMs(header(e.response?.headers, 'retry-after'), now) };
}

/** Throttling as Google documents it: 429, and 403 with rateLimitExceeded / userRateLimitExceeded. */
export function isThrottled(f: ApiFailure): boolean {
  return f.status === 429 || (f.status === 403 && (f.reason === 'rateLimitExceeded' || f.reason === 'userRateLimitExceeded'));
}

/** An answer of the API that the operation did not handle itself, kept until `run` maps it. */
export class GoogleApiError extends Error {
  constructor(readonly failure: ApiFailure) {
    super(`Google Calendar answered ${failure.status}${failure.reason ? ` (${failure.reason})` : ''}: ${failure.message}`);
    this.name = 'GoogleApiError';
  }
}

/**
 * The ProviderError of an answer no request handled (messages carry no token or URL):
 * - 403 insufficientPermissions / 401: the grant lacks the scope or is refused: auth_failed;
 * - 404, 410, other 403 (no access to the calendar): calendar_not_found;
 * - 429 or rate-limit 403 still throttled after our retries, 5xx, quota exhausted: unavailable;
 * - other 4xx: rejected.
 */
export function providerErrorOf(f: ApiFailure, what: string): ProviderError {
  const text = `${what}: Google Calendar answered ${f.status}${f.reason ? ` (${f.reason})` : ''}`;
  if (f.status === 401 || (f.status === 403 && f.reason === 'insufficientPermissions')) return new ProviderError('auth_failed', text);
  if (isThrottled(f) || (f.status ?? 0) >= 500 || (f.status === 403 && (f.reason === 'quotaExceeded' || f.reason === 'dailyLimitExceeded'))) {
    return new ProviderError('unavailable', text);
  }
  if (f.status === 404 || f.status === 410 || f.status === 403) return new ProviderError('calendar_not_found', text);
  return new ProviderError('rejected', text);
}
