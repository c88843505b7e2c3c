import http from 'node:http';
import https from 'node:https';
import { AddressNotAllowedError, checkTargetUrl, guardedLookup, systemResolveAll, type AddressMode, type ResolveAll } from '@sched/address-policy';
import { CALDAV_TARGET_RULES } from './http-fetch';

/** The answer to an object write: its status and ETag. */
export interface ObjectAnswer {
  status: number;
  etag: string | null;
}

/** A URL this mode's rules refuse (scheme, credentials, format); nothing was sent. */
export class ObjectUrlRefusedError extends Error {
  constructor(readonly problem: string) {
    super(`not a URL this service connects to (${problem})`);
    this.name = 'ObjectUrlRefusedError';
  }
}

/**
 * A kept-alive connection the server had already closed: the request never reached it. Retried once,
 * at once, on a new connection, as got does for the other CalDAV requests (http-fetch.ts).
 */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
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
   * (the deadline), or the transport's error (no answer). Never follows a redirect: a 3xx is an answer.
   */
  send(method: 'PUT' | 'DELETE', url: URL, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<ObjectAnswer>;
  close(): void;
}

type Attempt = { answered: true; status: number; etag: string | null } | { answered: false; error: unknown };

/**
 * The requests of every calendar write (PUT and DELETE of one object) on node:http itself: no tsdav,
 * no got, no fetch Request / Response objects in between, which cost about 1 ms of calendar-sync's CPU
 * per Booking (bench/write.bench.ts). Not undici: a server that closes every connection (Radicale) makes
 * undici end each socket with an error object, and Node reads that error's stack (source-mapped in the
 * deployed bundle), about 1 ms more per request than node:http in a micro loop. The outbound address
 * policy is the one createGuardedGot applies:
 * - the URL passes checkTargetUrl before anything connects (scheme, no credentials, an IP literal must
 *   be allowed, `localhost` names refused in production mode);
 * - every connection resolves its name through guardedLookup (the request's `lookup`, handed to
 *   net/tls.connect): refused when any address is not allowed, and the socket connects to exactly the
 *   addresses checked (no DNS rebinding);
 * - redirects are not followed (the caller sends a 3xx through the tsdav path, which follows
 *   same-origin ones); nothing is asked compressed; a stale kept-alive socket is retried once.
 * Keep-alive agents per scheme (most servers keep connections; Radicale closes every one).
 */
export function createObjectTransport(opts: ObjectTransportOptions): ObjectTransport {
  const lookup = guardedLookup(opts.mode, opts.resolveAll ?? systemResolveAll);
  const agents = {
    http: new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: IDLE_SOCKET_MS }),
    https: new https.Agent({ keepAlive: true, scheduling: 'lifo', timeout: IDLE_SOCKET_MS }),
  };

  function once(method: string, url: URL, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<Attempt> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (attempt: Attempt) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(attempt);
      };
      const secure = url.protocol === 'https:';
      const req = (secure ? https : http).request(
        url,
        {
          method,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          agent: secure ? agents.https : agents.http,
          lookup,
        },
        (res) => {
          const etag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
          const answer: Attempt = { answered: true, status: res.statusCode ?? 0, etag };
          // The body of a write's answer is never used; if it is cut short the answer is known all the same.
          res.on('end', () => finish(answer));
          res.on('error', () => finish(answer));
          res.on('aborted', () => finish(answer));
          res.resume();
        },
      );
      const onAbort = () => {
        finish({ answered: false, error: signal.reason });
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('error', (error) => finish({ answered: false, error }));
      req.end(body);
    });
  }

  return {
    async send(method, url, headers, body, signal) {
      if (signal.aborted) throw signal.reason;
      const checked = checkTargetUrl(url.href, opts.mode, CALDAV_TARGET_RULES);
      if (!checked.ok) throw checked.problem === 'address_not_allowed' ? new AddressNotAllowedError(url.hostname) : new ObjectUrlRefusedError(checked.problem);
      let attempt = await once(method, url, headers, body, signal);
      if (!attempt.answered && !signal.aborted && STALE_SOCKET.has(errorCode(attempt.error) ?? '')) attempt = await once(method, url, headers, body, signal);
      if (attempt.answered) return { status: attempt.status, etag: attempt.etag };
      // Refused by the guarded lookup inside the socket: the policy's own error.
      if (errorCode(attempt.error) === 'EADDRNOTALLOWED' && !(attempt.error instanceof AddressNotAllowedError)) throw new AddressNotAllowedError(url.hostname);
      throw attempt.error;
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
