import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted HTTP server on 127.0.0.1 for client and CLI tests: it records every request and
 * answers from a queue of replies (or a handler), so a test states exactly what the API says.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

export interface StubReply {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  /** Drop the connection without an answer (a network failure). */
  destroy?: boolean;
}

export type StubHandler = (req: RecordedRequest) => StubReply | Promise<StubReply>;
export type ReplyValidator = (r: { method: string; path: string; status: number; headers: Record<string, string>; body: unknown }) => string[];

export interface StubServer {
  url: string;
  requests: RecordedRequest[];
  /** Contract mismatches of the replies sent, when a validator was given. */
  mismatches: string[];
  enqueue(...replies: StubReply[]): void;
  handle(handler: StubHandler): void;
  close(): Promise<void>;
}

export async function startStubServer(opts: { validate?: ReplyValidator } = {}): Promise<StubServer> {
  const requests: RecordedRequest[] = [];
  const mismatches: string[] = [];
  const queue: StubReply[] = [];
  let handler: StubHandler | null = null;
  let counter = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://stub');
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = body ? JSON.parse(body) : undefined;
        } catch {
          json = undefined;
        }
        const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body, json };
        requests.push(recorded);
        const reply = queue.shift() ?? (handler ? await handler(recorded) : { status: 599, body: 'no reply scripted' });
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        const requestId = `req_stub_${++counter}`;
        const payload = withRequestId(reply.body, requestId);
        const headers: Record<string, string> = { 'x-request-id': requestId, ...reply.headers };
        if (typeof payload !== 'string' && payload !== undefined) headers['content-type'] = 'application/json';
        if (opts.validate && url.pathname.startsWith('/v1/')) {
          mismatches.push(...opts.validate({ method: recorded.method, path: url.pathname, status: reply.status, headers, body: payload }));
        }
        res.writeHead(reply.status, headers);
        res.end(payload === undefined ? undefined : typeof payload === 'string' ? payload : JSON.stringify(payload));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    mismatches,
    enqueue: (...replies) => queue.push(...replies),
    handle: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Envelopes get the request id of their answer, as the real API does (meta.request_id = X-Request-Id). */
function withRequestId(body: unknown, requestId: string): unknown {
  if (body && typeof body === 'object' && 'meta' in body) {
    const b = body as { meta: Record<string, unknown> };
    return { ...b, meta: { ...b.meta, request_id: requestId } };
  }
  return body;
}

export const ok = (data: unknown, status = 200): StubReply => ({ status, body: { data, meta: {} } });
export const page = (data: unknown[], nextCursor: string | null): StubReply => ({ status: 200, body: { data, meta: { next_cursor: nextCursor } } });
export const apiError = (status: number, code: string, message = 'Refused.', details: unknown[] = [], headers?: Record<string, string>): StubReply => ({
  status,
  headers,
  body: { error: { code, message, details }, meta: {} },
});
