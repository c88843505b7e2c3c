import { Agent, type Dispatcher } from 'undici';
import { AddressNotAllowedError, checkTargetUrl, guardedLookup, systemResolveAll, type AddressMode, type ResolveAll } from '@sched/address-policy';
import { CALDAV_TARGET_RULES } from './http-fetch';

/** The answer to an object write: its status and the headers a caller reads (lower-case names). */
export interface ObjectAnswer {
  status: number;
  etag: string | null;
}

/** A URL this mode's rules refuse (scheme, credentials, format, an address literal); nothing was sent. */
export class ObjectUrlRefusedError extends Error {
  constructor(readonly problem: string) {
    super(`not a URL this service connects to (${problem})`);
    this.name = 'ObjectUrlRefusedError';
  }
}

/**
 * A kept-alive connection the server had already closed: the request never reached it. Retried once,
 * at once, on a new connection (as got does for the other CalDAV requests, http-fetch.ts).
 */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);
/** Idle pooled sockets close after this, before servers commonly close them (as http-fetch.ts). */
const IDLE_SOCKET_MS = 30_000;

export interface ObjectTransportOptions {
  /** The outbound address policy (docs/security.md, "Outbound address policy"). */
  mode: AddressMode;
  /** DNS of the guarded lookup; tests fake it. */
  resolveAll?: ResolveAll;
}

export interface ObjectTransport {
  /**
   * One PUT or DELETE of a calendar object: the answer once its body has been read (and dropped).
   * Rejects with ObjectUrlRefusedError or AddressNotAllowedError (the policy), the signal's reason
   * (deadline), or the transport's error (no answer); never follows a redirect (a 3xx is an answer).
   */
  send(method: 'PUT' | 'DELETE', url: URL, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<ObjectAnswer>;
  close(): void;
}

/**
 * The requests of every calendar write (PUT and DELETE of one object), on undici's dispatch API: no
 * tsdav, no got, no fetch Request/Response objects in between. They were about 1 ms of calendar-sync's
 * CPU per Booking (bench/write.bench.ts profile: got's request machinery, tsdav's header merging, the
 * Headers and Response built for it) against this path's fraction of that. The outbound address policy
 * is the one createGuardedGot applies (as webhook-dispatch's sender does on undici):
 * - the URL passes checkTargetUrl before anything connects (scheme, no credentials, an IP literal must
 *   be allowed, `localhost` names refused in production mode);
 * - every connection resolves its name through guardedLookup (undici hands `connect.lookup` to
 *   net/tls.connect): refused when any address is not allowed, and the socket connects to exactly the
 *   addresses checked (no DNS rebinding);
 * - redirects are not followed (the caller sends a 3xx through the tsdav path, which follows
 *   same-origin ones); nothing asked compressed; a stale kept-alive socket is retried once.
 * One keep-alive pool per origin (undici's Agent); Radicale closes every connection anyway.
 */
export function createObjectTransport(opts: ObjectTransportOptions): ObjectTransport {
  const agent = new Agent({
    connect: { lookup: guardedLookup(opts.mode, opts.resolveAll ?? systemResolveAll) },
    keepAliveTimeout: IDLE_SOCKET_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_MS,
    // The operation's AbortSignal is the one deadline.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  function once(method: string, url: URL, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<ObjectAnswer & { answered: true } | { answered: false; error: unknown }> {
    return new Promise((resolve) => {
      let answer: ObjectAnswer | undefined;
      let settled = false;
      let controller: Dispatcher.DispatchController | undefined;
      const finish = (value: (ObjectAnswer & { answered: true }) | { answered: false; error: unknown }) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = () => {
        controller?.abort(signal.reason);
        finish({ answered: false, error: signal.reason });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      agent.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          body,
        },
        {
          onRequestStart(c) {
            controller = c;
            if (signal.aborted) c.abort(signal.reason);
          },
          onResponseStart(_c, statusCode, h) {
            const etag = h.etag;
            answer = { status: statusCode, etag: typeof etag === 'string' ? etag : null };
          },
          onResponseData() {
            // The body of a write's answer is never used.
          },
          onResponseEnd() {
            if (answer) finish({ ...answer, answered: true });
            else finish({ answered: false, error: new Error('the answer ended without a status') });
          },
          onResponseError(_c, err) {
            // After the status: the answer is known, only its body was cut short.
            if (answer) finish({ ...answer, answered: true });
            else finish({ answered: false, error: err });
          },
        },
      );
    });
  }

  return {
    async send(method, url, headers, body, signal) {
      if (signal.aborted) throw signal.reason;
      const checked = checkTargetUrl(url.href, opts.mode, CALDAV_TARGET_RULES);
      if (!checked.ok) throw checked.problem === 'address_not_allowed' ? new AddressNotAllowedError(url.hostname) : new ObjectUrlRefusedError(checked.problem);
      let result = await once(method, url, headers, body, signal);
      if (!result.answered && !signal.aborted && STALE_SOCKET.has(errorCode(result.error) ?? '')) result = await once(method, url, headers, body, signal);
      if (result.answered) return { status: result.status, etag: result.etag };
      throw result.error;
    },
    close() {
      void agent.destroy().catch(() => undefined);
    },
  };
}

/** The error's code, also when the policy's error comes wrapped by the socket. */
function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
