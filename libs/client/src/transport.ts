import { randomUUID } from 'node:crypto';
import { parseRetryAfter, type ErrorDetail } from '@sched/contracts';
import { ApiError, NetworkError } from './errors';
import type { RequestOptions } from './types';
import { CLIENT_VERSION } from './version';

/** decisions.md §2: rate limited, upstream unreachable, calendar fail-closed. Never another 4xx. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

export interface TransportConfig {
  baseUrl: string;
  apiKey: string;
  maxRetries: number;
  timeoutMs: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  onResponse?: (info: ResponseInfo) => void;
}

/** Seen after every HTTP attempt, for logging and metrics; carries no secret. */
export interface ResponseInfo {
  method: string;
  path: string;
  status: number;
  attempt: number;
  requestId: string | null;
  idempotentReplayed: boolean;
}

export type QueryValue = string | number | Date | undefined;

export interface ApiRequest {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  options?: RequestOptions;
}

export interface Envelope<T, M = { request_id: string }> {
  data: T;
  meta: M;
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    params.append(k, v instanceof Date ? v.toISOString() : String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

function isErrorEnvelope(body: unknown): body is { error: { code: string; message: string; details?: ErrorDetail[] }; meta?: { request_id?: string } } {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

/**
 * One call to the API with its retries. A POST gets an Idempotency-Key once, before the first
 * attempt, so every retry carries the same key and the server can never act twice.
 */
export class Transport {
  constructor(private readonly config: TransportConfig) {}

  /** Exponential backoff with jitter (half fixed, half random), capped. */
  private backoffMs(attempt: number): number {
    const ceiling = Math.min(this.config.maxRetryDelayMs, this.config.retryBaseDelayMs * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  async send<T>(req: ApiRequest): Promise<T> {
    const { config } = this;
    const url = `${config.baseUrl}${req.path}${queryString(req.query)}`;
    const maxRetries = req.options?.maxRetries ?? config.maxRetries;
    const headers: Record<string, string> = {
      authorization: `Bearer ${config.apiKey}`,
      accept: 'application/json',
      'user-agent': `sched-client/${CLIENT_VERSION} node/${process.versions.node}`,
    };
    if (req.method === 'POST') headers['idempotency-key'] = req.options?.idempotencyKey ?? randomUUID();
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    if (body !== undefined) headers['content-type'] = 'application/json';

    for (let attempt = 1; ; attempt++) {
      const canRetry = attempt <= maxRetries;
      const timeout = AbortSignal.timeout(config.timeoutMs);
      const signal = req.options?.signal ? AbortSignal.any([req.options.signal, timeout]) : timeout;
      let res: Response;
      let text: string;
      try {
        res = await config.fetch(url, { method: req.method, headers, body, signal });
        text = await res.text();
      } catch (err) {
        if (req.options?.signal?.aborted) throw err; // the caller gave up: no retry
        const timedOut = timeout.aborted;
        if (canRetry) {
          await config.sleep(this.backoffMs(attempt - 1));
          continue;
        }
        const reason = timedOut ? `timed out after ${config.timeoutMs} ms` : describeCause(err);
        throw new NetworkError(`${req.method} ${req.path} failed: ${reason} (after ${attempt} attempt${attempt > 1 ? 's' : ''})`, {
          cause: err,
          timedOut,
          attempts: attempt,
        });
      }

      const requestId = res.headers.get('x-request-id');
      config.onResponse?.({
        method: req.method,
        path: req.path,
        status: res.status,
        attempt,
        requestId,
        idempotentReplayed: res.headers.get('idempotent-replayed') === 'true',
      });
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (res.ok && parsed !== undefined) return parsed as T;

      const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
      if (RETRYABLE_STATUSES.has(res.status) && canRetry) {
        const wait = retryAfter ?? this.backoffMs(attempt - 1);
        // A server asking for a longer pause than we are willing to wait gets its error back now.
        if (wait <= config.maxRetryDelayMs) {
          await config.sleep(wait);
          continue;
        }
      }
      throw toApiError(res.status, parsed, requestId, retryAfter, attempt);
    }
  }
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function toApiError(status: number, body: unknown, requestId: string | null, retryAfter: number | undefined, attempts: number): ApiError {
  const retryAfterSeconds = retryAfter === undefined ? null : Math.ceil(retryAfter / 1000);
  if (isErrorEnvelope(body)) {
    return new ApiError({
      code: body.error.code as ApiError['code'],
      status,
      message: body.error.message,
      details: Array.isArray(body.error.details) ? body.error.details : [],
      requestId: body.meta?.request_id ?? requestId,
      retryAfterSeconds,
      attempts,
    });
  }
  return new ApiError({
    code: 'unexpected_response',
    status,
    message: `HTTP ${status} without the API's JSON envelope`,
    requestId,
    retryAfterSeconds,
    attempts,
  });
}
