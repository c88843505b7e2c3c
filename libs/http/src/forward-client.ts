import http from 'node:http';
import https from 'node:https';
import { currentContext } from '@sched/logger';
import { INTERNAL_CREDENTIAL_HEADER, type CredentialSigner, type OnBehalfOf } from './internal-credential';
import { onBehalfOf } from './request-context';
import { UpstreamError } from './upstream-error';

/**
 * The gateway's forwarding hop (a routed request passed to its owning service, the answer passed back),
 * on node:http with a keep-alive Agent.
 *
 * Why not got, which service-to-service calls used before: on the gateway's hop, the hottest path of
 * the system, got's per-request option normalisation, stream plumbing and hooks cost more CPU than the
 * whole rest of the gateway's work on a request (measured on the 2-core VM). This client does only
 * what those calls need and keeps got 11's observable behaviour (test/support/got-reference.ts is the
 * reference the tests compare the bytes on the wire with); the internal client is built on it:
 * - URL: base URL + path joined and normalised by WHATWG URL, like got's `prefixUrl`;
 * - headers: `user-agent: sched-internal`, x-request-id of the current context unless given, the
 *   caller's headers, content-length for a body. No `accept-encoding`: got asked for gzip and undid
 *   it; not asking gives the same bytes (no service compresses);
 * - a body on GET is sent (GET /v1/event-types may carry one); a body on HEAD is refused, as got did;
 * - statuses are returned, never retried or thrown; the body comes back as the bytes received;
 * - `timeoutMs` bounds each attempt from request to the last body byte → kind `timeout`; any other
 *   transport failure (refused, reset, not HTTP) → kind `unreachable`;
 * - retries (got's rule): after a connection fault or a timeout, for GET/PUT/HEAD/DELETE/OPTIONS/TRACE
 *   only (never POST or PATCH), waiting 100 ms × attempt; faults that are not connection faults
 *   (a malformed answer, an invalid header) are not retried. `retryTimeouts: false` (the gateway's
 *   hop) retries connection faults only: a timed-out attempt already spent the caller's whole bound;
 * - redirects are not followed (got would; no service answers 3xx);
 * - with a `signer`, each request carries a fresh internal credential for `service` (the audience)
 *   on behalf of `onBehalf`, or of the request being handled (onBehalfOf), or of the service itself.
 */

export interface ForwardClientOptions {
  baseUrl: string;
  /** Name of the called service, for errors. */
  service?: string;
  /** Whole-request bound per attempt, from sending to the last byte of the answer. */
  timeoutMs?: number;
  /** Retries after a connection fault or timeout, for idempotent methods only. */
  retries?: number;
  /**
   * Whether a timed-out attempt counts for `retries` (default true, got's rule). False: only connection
   * faults are retried, so a caller waits at most one `timeoutMs` for an upstream that does not answer.
   */
  retryTimeouts?: boolean;
  /** Signs the internal credential each request carries (every call to a service behind the gateway). */
  signer?: CredentialSigner;
}

export interface ForwardRequestOptions {
  /** Headers sent as given (lower-case names), e.g. idempotency-key and content-type. */
  headers?: Record<string, string>;
  /** On whose behalf (the credential's principal, workspace, key); default onBehalfOf(). */
  onBehalf?: OnBehalfOf;
  /** Sent as is with its content-length; `content-type` goes in headers. */
  body?: Buffer | string;
}

export interface ForwardResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The answer's bytes, unparsed. */
  body: Buffer;
}

export interface ForwardClient {
  /** `path` is the request target (path and query), e.g. req.originalUrl. */
  request(method: string, path: string, opts?: ForwardRequestOptions): Promise<ForwardResponse>;
  /** Frees pooled sockets; call on shutdown. */
  close(): void;
}

/** got's default retry methods and error codes (got 11), which the internal client uses too. */
const RETRY_METHODS = new Set(['GET', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE']);
const RETRY_CODES = new Set(['ETIMEDOUT', 'ECONNRESET', 'EADDRINUSE', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'ENETUNREACH', 'EAI_AGAIN']);

/** One failed attempt: what the caller gets, and whether got's rule would try again. */
class AttemptFailure {
  constructor(
    readonly error: UpstreamError,
    readonly retriable: boolean,
  ) {}
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createForwardClient(opts: ForwardClientOptions): ForwardClient {
  const base = new URL(opts.baseUrl);
  const service = opts.service ?? base.host;
  // got's prefixUrl: the base gets a trailing slash and the path its leading slashes removed.
  const prefix = base.href.endsWith('/') ? base.href : `${base.href}/`;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const retries = opts.retries ?? 0;
  const retryTimeouts = opts.retryTimeouts ?? true;
  // Idle pooled sockets close after 30 s, before the server side (65 s) would, so a request never
  // goes out on a socket the server is closing (the reset race behind occasional 502s).
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`forward client: unsupported protocol ${base.protocol}`);
  const transport = base.protocol === 'https:' ? https : http;
  const agent = new transport.Agent({ keepAlive: true, timeout: 30_000 });
  const hostname = base.hostname.startsWith('[') ? base.hostname.slice(1, -1) : base.hostname;
  const port = base.port === '' ? undefined : Number(base.port);

  function attempt(method: string, target: string, headers: Record<string, string>, body: Buffer | string | undefined): Promise<ForwardResponse> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let req: http.ClientRequest;
      try {
        req = transport.request({ agent, hostname, port, path: target, method, headers });
      } catch (err) {
        // e.g. a header value node refuses to send: not a connection fault, so never retried.
        reject(new AttemptFailure(new UpstreamError('unreachable', service, { cause: err }), false));
        return;
      }
      const fail = (kind: 'timeout' | 'unreachable', cause: unknown, retriable: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(new AttemptFailure(new UpstreamError(kind, service, { cause }), retriable));
      };
      const timer = setTimeout(() => {
        const err = Object.assign(new Error(`Timeout awaiting 'request' for ${timeoutMs}ms`), { code: 'ETIMEDOUT' });
        fail('timeout', err, retryTimeouts);
        req.destroy();
      }, timeoutMs);
      timer.unref();
      // Stays attached: a destroyed request may still emit 'error' after the attempt has settled.
      req.on('error', (err) => fail('unreachable', err, RETRY_CODES.has(errorCode(err) ?? '')));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        // The connection ended before the whole answer (node reports 'aborted', code ECONNRESET).
        res.on('error', (err) => fail('unreachable', err, true));
        res.on('close', () => {
          if (!res.complete) fail('unreachable', Object.assign(new Error('The server aborted pending request'), { code: 'ECONNRESET' }), true);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        });
      });
      req.end(body);
    });
  }

  return {
    async request(method: string, path: string, req: ForwardRequestOptions = {}): Promise<ForwardResponse> {
      const upper = method.toUpperCase();
      let target: string;
      try {
        const url = new URL(prefix + path.replace(/^\/+/, ''));
        target = url.pathname + url.search;
      } catch (err) {
        throw new UpstreamError('unreachable', service, { cause: err });
      }
      const headers: Record<string, string> = { 'user-agent': 'sched-internal' };
      const requestId = currentContext().request_id;
      if (requestId) headers['x-request-id'] = requestId;
      Object.assign(headers, req.headers);
      if (opts.signer) {
        const who = req.onBehalf ?? onBehalfOf();
        headers['x-request-id'] = who.requestId;
        headers[INTERNAL_CREDENTIAL_HEADER] = `Bearer ${await opts.signer.sign(service, who)}`;
      }
      const { body } = req;
      if (body !== undefined) {
        // got refused a body on HEAD before sending anything; a request error, so 502.
        if (upper === 'HEAD') throw new UpstreamError('unreachable', service, { cause: new TypeError('The `HEAD` method cannot be used with a body') });
        if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = String(Buffer.byteLength(body));
      }
      const mayRetry = RETRY_METHODS.has(upper);
      for (let attemptCount = 1; ; attemptCount++) {
        try {
          return await attempt(upper, target, headers, body);
        } catch (err) {
          if (!(err instanceof AttemptFailure)) throw err;
          if (!mayRetry || !err.retriable || attemptCount > retries) throw err.error;
          await sleep(100 * attemptCount);
        }
      }
    },
    close() {
      agent.destroy();
    },
  };
}
