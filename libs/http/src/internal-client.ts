import http from 'node:http';
import { createForwardClient, type ForwardClientOptions } from './forward-client';
import type { OnBehalfOf } from './internal-credential';
import type { HttpMethod } from './route-table';
import { UpstreamError } from './upstream-error';

export { toUpstreamDomainError, UpstreamError, type UpstreamErrorKind } from './upstream-error';

/** The forward client's options (forward-client.ts): the internal client is that client, answering parsed JSON. */
export type InternalClientOptions = ForwardClientOptions;

export interface InternalRequestOptions {
  /** A JSON body (our bodies are objects). */
  json?: Record<string, unknown>;
  searchParams?: Record<string, string | number | boolean | undefined>;
  /** Extra headers, e.g. the client's idempotency-key. */
  headers?: Record<string, string>;
  /** On whose behalf the call acts (the credential's claims); default onBehalfOf(): the request being handled, or the service. */
  onBehalf?: OnBehalfOf;
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

/** An upstream body: JSON when its content type says so (off-contract JSON → UpstreamError invalid_response), else the text. */
export function parseBody(raw: string, contentType: string | undefined, service: string): unknown {
  if (raw.length === 0) return undefined;
  if (!/\bjson\b/i.test(contentType ?? '')) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new UpstreamError('invalid_response', service, { cause: err });
  }
}

/**
 * Client for service-to-service calls: keep-alive, bounded, request id propagated, statuses returned.
 * Built on the forwarding client (undici, got 11's rules for timeouts and retries): got cost ~0.35 ms
 * more CPU per call, and every Booking makes several of these calls.
 */
export function createInternalClient(opts: InternalClientOptions): InternalClient {
  const service = opts.service ?? new URL(opts.baseUrl).host;
  const client = createForwardClient({ ...opts, service });

  return {
    async request<T>(method: HttpMethod, path: string, req: InternalRequestOptions = {}): Promise<InternalResponse<T>> {
      const headers: Record<string, string> = {};
      let body: Buffer | string | undefined = req.body;
      if (body === undefined && req.json !== undefined) {
        body = JSON.stringify(req.json);
        headers['content-type'] = 'application/json';
      }
      Object.assign(headers, req.headers);
      const res = await client.request(method, withSearchParams(path, req.searchParams), { headers, body, onBehalf: req.onBehalf });
      const text = res.body.toString('utf8');
      const parsed = req.raw ? text : parseBody(text, res.headers['content-type'], service);
      return { status: res.status, headers: res.headers, body: parsed as T };
    },
    close: () => client.close(),
  };
}

/** got's searchParams: undefined values are left out, the rest encoded as URLSearchParams does. */
function withSearchParams(path: string, params: InternalRequestOptions['searchParams']): string {
  if (!params) return path;
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) search.set(k, String(v));
  const query = search.toString();
  if (query === '') return path;
  const hash = path.indexOf('#');
  const bare = hash < 0 ? path : path.slice(0, hash);
  return `${bare.split('?')[0]}?${query}`;
}
