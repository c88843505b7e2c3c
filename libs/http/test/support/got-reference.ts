// The got 11 client the services used before libs/http's own clients (undici now): kept as the reference the
// tests compare those clients' requests with (docs/decisions.md, "Build and dependencies").
import http from 'node:http';
import https from 'node:https';
import got, { RequestError, TimeoutError, type Got } from 'got';
import { currentContext } from '@sched/logger';
import { UpstreamError, type InternalClient, type InternalClientOptions, type InternalRequestOptions, type InternalResponse } from '../../src';
import { parseBody } from '../../src/internal-client';
import type { HttpMethod } from '../../src/route-table';

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

export function createGotReferenceClient(opts: InternalClientOptions): InternalClient {
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
