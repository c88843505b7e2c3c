import { createGuardedGot, UrlNotAllowedError, type AddressMode, type ResolveAll, type TargetRules } from '@sched/address-policy';

/** CalDAV servers are reached over http or https in both modes (plain http only sees use on private test setups). */
export const CALDAV_TARGET_RULES: TargetRules = { productionSchemes: ['https:', 'http:'] };

/** Statuses whose responses carry no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Redirects followed for one request, as fetch's limit is 20; a CalDAV server needs one or two. */
const MAX_REDIRECTS = 5;
/**
 * A kept-alive connection the server had already closed: the request never reached it. got retries
 * these once (any method: CalDAV's PROPFIND and REPORT too), at once, on a new connection.
 */
const STALE_SOCKET = ['ECONNRESET', 'EPIPE', 'ECONNABORTED'];
const RETRY_METHODS = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'POST', 'PATCH', 'PROPFIND', 'REPORT', 'MKCALENDAR'];
/** Idle pooled sockets close after this, before servers commonly close them. */
const IDLE_SOCKET_MS = 30_000;

/** A redirect to another origin (scheme, host or port): refused, never followed, with or without credentials. */
export class CrossOriginRedirectError extends Error {
  readonly code = 'ECROSSORIGINREDIRECT';
  constructor(from: URL, to: URL) {
    super(`redirect from ${from.origin} to another origin (${to.origin}) refused`);
    this.name = 'CrossOriginRedirectError';
  }
}

export interface HttpFetchOptions {
  /** The outbound address policy (docs/security.md, "Outbound address policy"). */
  mode: AddressMode;
  /** DNS of the guarded lookup; tests fake it. */
  resolveAll?: ResolveAll;
}

export type HttpFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * `fetch` for the CalDAV requests tsdav makes, on got (the design's client for calls that leave the
 * system) with keep-alive: the same request and a standard Response, whose body has been read in full.
 * Every connection goes through the outbound address policy (@sched/address-policy createGuardedGot):
 * the URL is checked before connecting, each redirect hop again, and a name is resolved by the guarded
 * lookup, which refuses it when any of its addresses is not allowed and connects to exactly the
 * addresses it checked (no second DNS answer, so no rebinding). got follows redirects (at most 5, a
 * 303 as a GET), same origin only: a redirect to another origin rejects with CrossOriginRedirectError
 * before anything is sent there, so the credentials a caller put in the headers never leave the origin
 * they were given for. `redirect: 'manual'` hands the 3xx to the caller instead (tsdav's .well-known
 * discovery); `redirect: 'error'` refuses it. The caller's AbortSignal cancels the request.
 */
export function createHttpFetch(opts: HttpFetchOptions): HttpFetch & { close(): void } {
  /**
   * Pooled connections to calendar servers. Servers that keep connections open (most do; Radicale's
   * built-in server does not) are reused across operations instead of a TCP connect per request.
   */
  const client = createGuardedGot({ mode: opts.mode, rules: CALDAV_TARGET_RULES, resolveAll: opts.resolveAll, agent: { scheduling: 'lifo', timeout: IDLE_SOCKET_MS } });
  /** The cross-origin redirect a request was refused for, by the request's options (what got's error carries). */
  const crossOrigins = new WeakMap<object, CrossOriginRedirectError>();
  /**
   * What every request shares, merged into got's defaults once here instead of for each request (got
   * normalizes and merges each request's options with its instance's: hooks, retry and the rest were
   * per-request objects before).
   */
  const caldavGot = client.got.extend({
    responseType: 'buffer',
    maxRedirects: MAX_REDIRECTS,
    // got's Method type knows no WebDAV methods, hence the cast; a delay of 0 would mean "no retry".
    retry: { limit: 1, methods: RETRY_METHODS as never, statusCodes: [], errorCodes: STALE_SOCKET, calculateDelay: ({ computedValue }) => (computedValue === 0 ? 0 : 1) },
    hooks: {
      beforeRedirect: [
        (options, response) => {
          const from = new URL(response.url);
          const to = options.url as URL;
          if (to.origin !== from.origin) {
            const refused = new CrossOriginRedirectError(from, to);
            crossOrigins.set(options, refused);
            throw refused;
          }
          // got already made a 303 a GET without its body; as fetch, its content headers go too.
          if (response.statusCode === 303) for (const h of ['content-type', 'content-encoding', 'content-language', 'content-location']) delete options.headers[h];
        },
      ],
    },
  });

  const fetchIt = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('httpFetch takes a URL');
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') throw new TypeError('httpFetch sends text bodies only');
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw signal.reason;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const body = typeof init.body === 'string' ? init.body : undefined;
    if (body !== undefined) headers['content-type'] ??= 'text/plain;charset=UTF-8';
    const url = typeof input === 'string' ? new URL(input) : input;
    // got refuses other schemes itself; this says so in fetch's words. Never the built-in fetch, which knows no address policy.
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`httpFetch fetches http and https only, not ${url.protocol}`);

    const request = caldavGot(url, {
      method: (init.method ?? 'GET').toUpperCase() as 'GET',
      headers,
      body,
      followRedirect: init.redirect !== 'manual' && init.redirect !== 'error',
    });
    const cancel = () => request.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    let res;
    try {
      res = await request;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const options = (err as { options?: unknown } | null)?.options;
      const crossOrigin = typeof options === 'object' && options !== null ? crossOrigins.get(options) : undefined;
      if (crossOrigin) throw crossOrigin;
      const refused = client.policyError(err);
      if (refused instanceof UrlNotAllowedError) throw new TypeError(refused.message);
      throw refused;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
    const status = res.statusCode;
    if (init.redirect === 'error' && status >= 300 && status < 400 && res.headers.location !== undefined) throw new TypeError('redirect refused (redirect: error)');
    if (status < 200 || status > 599) throw new Error(`unexpected HTTP status ${status}`);
    const pairs: [string, string][] = [];
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
    // An empty body as no body: the same answer to text(), arrayBuffer() and a cancel, without a stream to make and read.
    const response = new Response(NULL_BODY.has(status) || res.body.length === 0 ? null : res.body, { status, statusText: res.statusMessage ?? '', headers: pairs });
    Object.defineProperty(response, 'url', { value: res.url });
    return response;
  };
  return Object.assign(fetchIt, { close: () => client.close() });
}
