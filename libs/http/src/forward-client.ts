import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { currentContext } from '@sched/logger';
import { INTERNAL_CREDENTIAL_HEADER, type CredentialSigner, type OnBehalfOf } from './internal-credential';
import { onBehalfOf } from './request-context';
import { UpstreamError } from './upstream-error';

/**
 * The gateway's forwarding hop (a routed request passed to its owning service, the answer passed back)
 * and the base of every service-to-service call (internal-client.ts), on undici: Node's own HTTP/1.1
 * client, one keep-alive `Pool` per upstream origin. got, the design's client for calls that leave the
 * system, measured too slow for this hop (decisions.md, "Build and dependencies").
 * What this file adds to undici is our rules for the hop:
 * - URL: base URL + path joined and normalised by WHATWG URL (got's `prefixUrl`, which callers knew);
 * - headers: `user-agent: sched-internal`, the caller's headers, x-request-id (set once: the credential's
 *   request id when signing, else the given one, else the current context's), content-length for a
 *   body. No `accept-encoding`: no service compresses;
 * - a body on GET is sent (GET /v1/event-types may carry one); a body on HEAD is refused;
 * - statuses are returned, never retried or thrown; the body comes back as the bytes received;
 * - `timeoutMs` bounds each attempt from request to the last body byte → kind `timeout`; any other
 *   transport failure (refused, reset, not HTTP) → kind `unreachable`;
 * - retries (got 11's rule, which the services were built on): after a connection fault or a timeout,
 *   for GET/PUT/HEAD/DELETE/OPTIONS/TRACE only (never POST or PATCH), waiting 100 ms × attempt;
 *   faults that are not connection faults (a malformed answer, an invalid header) are not retried.
 *   `retryTimeouts: false` (the gateway's hop) retries connection faults only: a timed-out attempt
 *   already spent the caller's whole bound;
 * - redirects are not followed (no service answers 3xx);
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
  /** How long a pooled socket may stay idle before the client closes it; default IDLE_SOCKET_MS. */
  idleTimeoutMs?: number;
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
  /** Lower-case names; a header sent twice is joined with ", " (set-cookie stays a list), as node:http reads it. */
  headers: IncomingHttpHeaders;
  /** The answer's bytes, unparsed. */
  body: Buffer;
}

export interface ForwardClient {
  /** `path` is the request target (path and query), e.g. req.originalUrl. */
  request(method: string, path: string, opts?: ForwardRequestOptions): Promise<ForwardResponse>;
  /** Frees pooled sockets; call on shutdown. */
  close(): void;
}

/**
 * Idle pooled sockets close after 30 s, before the services' server side (keepAliveTimeout 65 s)
 * would, so a request never goes out on a socket the server is closing (the reset race behind
 * occasional 502s). undici would otherwise follow the server's `Keep-Alive: timeout=65` hint.
 */
export const IDLE_SOCKET_MS = 30_000;

/** got's default retry methods (got 11), which the internal client uses too. */
const RETRY_METHODS = new Set(['GET', 'PUT', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE']);
/**
 * Connection faults: got 11's error codes, and undici's for a socket closed under a request or its
 * answer (UND_ERR_SOCKET, "other side closed"). A reply that is not HTTP (HPE_*), a header undici
 * refuses to send (UND_ERR_INVALID_ARG) and the like are not.
 */
const RETRY_CODES = new Set(['ETIMEDOUT', 'ECONNRESET', 'EADDRINUSE', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

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


/** undici's answer headers in node:http's shape, which callers (and res.setHeader) read. */
function nodeHeaders(headers: Record<string, string | string[] | undefined>): IncomingHttpHeaders {
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value) && name !== 'set-cookie') headers[name] = value.join(', ');
  }
  return headers as IncomingHttpHeaders;
}

/**
 * The dispatch handler of one attempt: its state and undici's callbacks as one object with its
 * methods on the prototype, rather than a handler object and closures made per request.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private status = 0;
  private answerHeaders: Record<string, string | string[] | undefined> = {};
  private readonly chunks: Buffer[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (answer: ForwardResponse) => void,
    /** The attempt failed: the request retries or rejects (createForwardClient's send). */
    private readonly reject: (failure: AttemptFailure) => void,
    private readonly service: string,
    timeoutMs: number,
    private readonly retryTimeouts: boolean,
  ) {
    this.timer = setTimeout(() => {
      const err = Object.assign(new Error(`Timeout awaiting 'request' for ${timeoutMs}ms`), { code: 'ETIMEDOUT' });
      this.fail('timeout', err, this.retryTimeouts);
      this.controller?.abort(err);
    }, timeoutMs);
  }

  private fail(kind: 'timeout' | 'unreachable', cause: unknown, retriable: boolean): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(new AttemptFailure(new UpstreamError(kind, this.service, { cause }), retriable));
  }

  /** Dispatching it threw: it is over, its timer with it. */
  cancel(): void {
    this.settled = true;
    clearTimeout(this.timer);
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    // Timed out while queued for a connection: never sent.
    if (this.settled) c.abort(new Error('timed out before it was sent'));
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, h: Record<string, string | string[] | undefined>): void {
    this.status = statusCode;
    this.answerHeaders = h;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const { chunks } = this;
    this.resolve({ status: this.status, headers: nodeHeaders(this.answerHeaders), body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail('unreachable', err, RETRY_CODES.has(errorCode(err) ?? ''));
  }
}

/**
 * A request target (path and query) that WHATWG URL would leave exactly as it is after the prefix's
 * path: one leading slash, no dot segments or escapes in the path (so nothing to resolve or decode),
 * a non-empty query, and no character either part would percent-encode (space, quotes, `<>`, `` ` ``,
 * `{}`, `#`, `\`, controls, non-ASCII) or read otherwise.
 */
const PLAIN_TARGET = /^\/(?!\/)[A-Za-z0-9_~!$&()*+,;=:@/-]*(?:\?[A-Za-z0-9._~!$&()*+,;=:@/?%-]+)?$/;

/**
 * The request target of `path` under the base URL `prefix` (ending in '/'), as got's prefixUrl made it:
 * the path's leading slashes removed, the two joined and normalised by WHATWG URL, its pathname and
 * search. The usual target (a plain path, PLAIN_TARGET) is joined as text: the same string without
 * parsing a URL per request (tested against URL). Throws what URL throws.
 */
export function targetResolver(prefix: string): (path: string) => string {
  const parsed = new URL(prefix);
  // Only under a base that is its own origin and path (no query, fragment or spelling URL would change).
  const basePath = parsed.search === '' && parsed.hash === '' && parsed.href === prefix ? parsed.pathname : undefined;
  return (path) => {
    if (basePath !== undefined && PLAIN_TARGET.test(path)) return basePath + path.slice(1);
    const url = new URL(prefix + path.replace(/^\/+/, ''));
    return url.pathname + url.search;
  };
}

export function createForwardClient(opts: ForwardClientOptions): ForwardClient {
  const base = new URL(opts.baseUrl);
  const service = opts.service ?? base.host;
  // got's prefixUrl: the base gets a trailing slash and the path its leading slashes removed.
  const prefix = base.href.endsWith('/') ? base.href : `${base.href}/`;
  const targetOf = targetResolver(prefix);
  const timeoutMs = opts.timeoutMs ?? 5000;
  const retries = opts.retries ?? 0;
  const retryTimeouts = opts.retryTimeouts ?? true;
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`forward client: unsupported protocol ${base.protocol}`);
  const idle = opts.idleTimeoutMs ?? IDLE_SOCKET_MS;
  const pool = new Pool(base.origin, { keepAliveTimeout: idle, keepAliveMaxTimeout: idle });

  /**
   * The attempts of one request, on undici's dispatch API (its lowest public layer: no stream or
   * AbortSignal per request, which cost measurably more CPU on this hop than request() did): each
   * attempt collects the answer's chunks as they come, and its timer aborts it through its dispatch
   * controller. A failed attempt is retried after 100 ms × attempt when got's rule allows it, else the
   * request fails with the attempt's error; every attempt settles the one promise of the request.
   */
  function send(method: string, path: string, headers: Record<string, string>, body: Buffer | string | undefined, resolve: (answer: ForwardResponse) => void, reject: (err: unknown) => void): void {
    const mayRetry = RETRY_METHODS.has(method);
    const run = (attemptCount: number): void => {
      const failed = (failure: AttemptFailure): void => {
        if (!mayRetry || !failure.retriable || attemptCount > retries) return reject(failure.error);
        setTimeout(() => run(attemptCount + 1), 100 * attemptCount);
      };
      const attempt = new Attempt(resolve, failed, service, timeoutMs, retryTimeouts);
      try {
        pool.dispatch({ method: method as Dispatcher.HttpMethod, path, headers, body }, attempt);
      } catch (err) {
        // undici reports its errors to the handler; anything thrown here fails the request as it is.
        attempt.cancel();
        reject(err);
      }
    };
    run(1);
  }

  /** After the credential, if any: the body's checks and headers, then the attempts. */
  function start(method: string, path: string, headers: Record<string, string>, body: Buffer | string | undefined, resolve: (answer: ForwardResponse) => void, reject: (err: unknown) => void): void {
    if (body !== undefined) {
      // A request error, so 502; nothing is sent.
      if (method === 'HEAD') return reject(new UpstreamError('unreachable', service, { cause: new TypeError('The `HEAD` method cannot be used with a body') }));
      if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = String(Buffer.byteLength(body));
    }
    send(method, path, headers, body, resolve, reject);
  }

  return {
    /**
     * One promise per request, settled by its attempts: no async function and no await of its own
     * (each is one more promise, and one more run of the async-context hook, per request). Everything
     * read from the current context (onBehalfOf, the request id) is read when it is called.
     */
    request(method: string, path: string, req: ForwardRequestOptions = {}): Promise<ForwardResponse> {
      return new Promise<ForwardResponse>((resolve, reject) => {
        const upper = method.toUpperCase();
        let target: string;
        try {
          target = targetOf(path);
        } catch (err) {
          return reject(new UpstreamError('unreachable', service, { cause: err }));
        }
        const headers: Record<string, string> = { 'user-agent': 'sched-internal', ...req.headers };
        const { body } = req;
        if (!opts.signer) {
          if (headers['x-request-id'] === undefined) {
            const requestId = currentContext().request_id;
            if (requestId) headers['x-request-id'] = requestId;
          }
          return start(upper, target, headers, body, resolve, reject);
        }
        const who = req.onBehalf ?? onBehalfOf();
        headers['x-request-id'] = who.requestId;
        opts.signer.sign(service, who).then((credential) => {
          headers[INTERNAL_CREDENTIAL_HEADER] = `Bearer ${credential}`;
          try {
            start(upper, target, headers, body, resolve, reject);
          } catch (err) {
            reject(err);
          }
        }, reject);
      });
    },
    close() {
      void pool.destroy().catch(() => undefined);
    },
  };
}
