import http from 'node:http';
import https from 'node:https';
import got, { RequestError, TimeoutError, type Got } from 'got';
import { DomainError } from '@sched/contracts';
import { currentContext } from '@sched/logger';
import type { HttpMethod } from './route-table';

export type UpstreamErrorKind = 'timeout' | 'unreachable' | 'invalid_response';

/** A call to another service got no usable HTTP answer. HTTP error statuses are not this: they are returned. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    readonly service: string,
    options?: { cause?: unknown },
  ) {
    super(`upstream ${service}: ${kind}`, options);
    this.name = 'UpstreamError';
  }
}

/** For the edge: 504 when the upstream was too slow, 502 when it could not be reached or answered garbage. */
export function toUpstreamDomainError(err: UpstreamError): DomainError {
  return new DomainError('upstream_unavailable', { status: err.kind === 'timeout' ? 504 : 502 });
}

export interface InternalClientOptions {
  baseUrl: string;
  /** Name of the called service, for errors and logs. */
  service?: string;
  /** Whole-request bound per attempt. */
  timeoutMs?: number;
  /** Retries after a connection failure or timeout, for idempotent methods only (got's default set). */
  retries?: number;
}

export interface InternalRequestOptions {
  /** A JSON body (our bodies are objects). */
  json?: Record<string, unknown>;
  searchParams?: Record<string, string | number | boolean | undefined>;
  /** Extra headers, e.g. contextHeaders(requestContext(req)) to forward workspace and key ids. */
  headers?: Record<string, string>;
  /** A body passed through as it came (the gateway forwarding a request); `content-type` goes in headers. */
  body?: Buffer | string;
  /** Return the body as text without parsing it (the gateway passes answers through unchanged). */
  raw?: boolean;
}

export interface InternalResponse<T> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
}

export interface InternalClient {
  request<T = unknown>(method: HttpMethod, path: string, opts?: InternalRequestOptions): Promise<InternalResponse<T>>;
  /** Frees pooled sockets; call on shutdown. */
  close(): void;
}

function parseBody(raw: string, contentType: string | undefined, service: string): unknown {
  if (raw.length === 0) return undefined;
  if (!/\bjson\b/i.test(contentType ?? '')) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new UpstreamError('invalid_response', service, { cause: err });
  }
}

function toUpstreamError(err: unknown, service: string): unknown {
  if (err instanceof TimeoutError) return new UpstreamError('timeout', service, { cause: err });
  if (err instanceof RequestError) return new UpstreamError('unreachable', service, { cause: err });
  return err;
}

function buildGot(opts: InternalClientOptions, agents: { http: http.Agent; https: https.Agent }): Got {
  return got.extend({
    prefixUrl: opts.baseUrl,
    timeout: { request: opts.timeoutMs ?? 5000 },
    retry: {
      limit: opts.retries ?? 0,
      // Statuses are the caller's to interpret (a 503 may be a contract answer), so only transport faults retry.
      statusCodes: [],
      calculateDelay: ({ computedValue, attemptCount }) => (computedValue === 0 ? 0 : Math.min(computedValue, 100 * attemptCount)),
    },
    throwHttpErrors: false,
    // GET /v1/event-types may carry a JSON body (api-v1.md), which the gateway must pass on.
    allowGetBody: true,
    responseType: 'text',
    agent: agents,
    headers: { 'user-agent': 'sched-internal' },
  });
}

/** got 11 client for service-to-service calls: keep-alive, bounded, request id propagated, statuses returned. */
export function createInternalClient(opts: InternalClientOptions): InternalClient {
  const service = opts.service ?? new URL(opts.baseUrl).host;
  // Idle pooled sockets close after 30 s, before the server side (65 s) would, so a request never
  // goes out on a socket the server is closing (the reset race behind occasional 502s).
  const agents = { http: new http.Agent({ keepAlive: true, timeout: 30_000 }), https: new https.Agent({ keepAlive: true, timeout: 30_000 }) };
  const client = buildGot(opts, agents);

  return {
    async request<T>(method: HttpMethod, path: string, req: InternalRequestOptions = {}): Promise<InternalResponse<T>> {
      const requestId = currentContext().request_id;
      const headers = { ...(requestId ? { 'x-request-id': requestId } : {}), ...req.headers };
      try {
        // got's prefixUrl refuses a leading slash; callers naturally write '/internal/...'.
        const res = await client(path.replace(/^\/+/, ''), {
          method,
          headers,
          ...(req.body !== undefined ? { body: req.body } : { json: req.json }),
          searchParams: req.searchParams,
        });
        const body = req.raw ? res.body : parseBody(res.body, res.headers['content-type'], service);
        return { status: res.statusCode, headers: res.headers, body: body as T };
      } catch (err) {
        throw toUpstreamError(err, service);
      }
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
