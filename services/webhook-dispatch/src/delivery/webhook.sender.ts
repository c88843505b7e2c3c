import { Agent, type Dispatcher } from 'undici';
import { AddressNotAllowedError, checkTargetUrl, guardedLookup, systemResolveAll, type AddressMode, type ResolveAll } from '@sched/address-policy';
import { redactString } from '@sched/logger';
import type { AttemptResult } from '../domain/delivery-policy';
import { WEBHOOK_TARGET_RULES } from '../domain/webhook-endpoints';

export interface WebhookSender {
  /** One attempt. Never throws: every failure is an AttemptResult. */
  send(url: string, headers: Record<string, string>, body: string): Promise<{ result: AttemptResult; latencyMs: number }>;
  close(): void;
}

export interface SenderOptions {
  mode: AddressMode;
  timeoutMs: number;
  /** Tests pass a fake resolver to prove a name resolving to a private address is refused. */
  resolveAll?: ResolveAll;
}

/** The receiver's body is never used; reading more than this just to keep a socket would be waste. */
const MAX_DRAIN_BYTES = 64 * 1024;
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ENOTIMP', 'EREFUSED']);
/**
 * undici's own connect deadline, past ours: our timer decides `timeout` first, this one only ends a
 * connection attempt (DNS included) that is still hanging after it.
 */
const CONNECT_GRACE_MS = 1000;

class AttemptTimeout extends Error {
  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

function classify(err: unknown, timeoutMs: number): AttemptResult {
  if (err instanceof AddressNotAllowedError) return { kind: 'error', errorKind: 'address_not_allowed', error: err.message };
  if ((err as Error | null)?.name === 'TimeoutError') return { kind: 'error', errorKind: 'timeout', error: `no response within ${timeoutMs} ms` };
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const detail = redactString(code ?? (err instanceof Error ? err.message : String(err))).slice(0, 200);
  if (code && DNS_CODES.has(code)) return { kind: 'error', errorKind: 'dns', error: detail };
  return { kind: 'error', errorKind: 'connection', error: detail };
}

/**
 * Sends webhooks on undici (Node's own HTTP/1.1 client), through its dispatch API: got, the design's
 * client for calls that leave the system, cost about 0.5 ms of CPU per attempt more on this path
 * (docs/decisions.md, "Build and dependencies"). The outbound address policy (@sched/address-policy)
 * is the same as got's guarded instance applied:
 * - the URL passes checkTargetUrl before anything connects (scheme for the mode, no credentials, an IP
 *   literal must be allowed, `localhost` names refused in production mode);
 * - every connection resolves its name through guardedLookup (undici hands `connect.lookup` to
 *   net/tls.connect), which refuses the name when any address is not allowed and gives the socket
 *   exactly the addresses it checked (no second DNS answer, so no rebinding);
 * - redirects are never followed (the dispatch API follows none), nothing is retried (the delivery
 *   schedule owns retries), nothing is asked compressed, statuses are returned.
 * One keep-alive pool per origin (undici's Agent), so a busy receiver does not pay a connection (and a
 * TLS handshake) per event. The attempt is decided by the response head; one timer is the deadline for
 * DNS, connect, TLS and that head (decisions.md §11: a 2xx within 10 s), and ends the connection if
 * the body is still coming then; at most 64 KiB of the body is read.
 */
export function createWebhookSender(opts: SenderOptions): WebhookSender {
  const agent = new Agent({
    connect: { lookup: guardedLookup(opts.mode, opts.resolveAll ?? systemResolveAll), timeout: opts.timeoutMs + CONNECT_GRACE_MS },
    // Our timer is the one deadline.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  function send(rawUrl: string, headers: Record<string, string>, body: string): Promise<{ result: AttemptResult; latencyMs: number }> {
    const started = performance.now();
    const done = (result: AttemptResult) => ({ result, latencyMs: Math.round(performance.now() - started) });
    // The URL was checked when registered; checked again because the mode or the rules may have changed since.
    const checked = checkTargetUrl(rawUrl, opts.mode, WEBHOOK_TARGET_RULES);
    if (!checked.ok) {
      const errorKind = checked.problem === 'address_not_allowed' ? 'address_not_allowed' : 'url_not_allowed';
      return Promise.resolve(done({ kind: 'error', errorKind, error: checked.problem }));
    }
    const { url } = checked.target;

    return new Promise((resolve) => {
      let decided = false;
      let ended = false;
      let controller: Dispatcher.DispatchController | undefined;
      let drained = 0;
      const decide = (result: AttemptResult) => {
        if (decided) return;
        decided = true;
        resolve(done(result));
      };
      const end = () => {
        ended = true;
        clearTimeout(timer);
      };
      // Until the response head: the attempt's deadline. After it: the body must end by then too, or
      // the connection is closed (the answer was already decided).
      const timer = setTimeout(() => {
        const err = new AttemptTimeout(opts.timeoutMs);
        decide(classify(err, opts.timeoutMs));
        ended = true;
        controller?.abort(err);
      }, opts.timeoutMs);
      agent.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'POST',
          headers: { ...headers, 'user-agent': 'sched-webhooks/1', 'content-length': String(Buffer.byteLength(body)) },
          body,
        },
        {
          onRequestStart(c) {
            controller = c;
            // Timed out while connecting: never sent.
            if (ended) c.abort(new AttemptTimeout(opts.timeoutMs));
          },
          onResponseStart(_c, statusCode, h) {
            const retryAfter = h['retry-after'];
            decide({ kind: 'response', statusCode, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
          },
          onResponseData(c, chunk) {
            drained += chunk.length;
            if (drained > MAX_DRAIN_BYTES) {
              end();
              c.abort(new Error('response body over the drain limit'));
            }
          },
          onResponseEnd() {
            end();
          },
          onResponseError(_c, err) {
            end();
            decide(classify(err, opts.timeoutMs));
          },
        },
      );
    });
  }

  return {
    send,
    close: () => {
      void agent.destroy().catch(() => undefined);
    },
  };
}
