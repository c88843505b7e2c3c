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

/** What the URL checks decided for one registered URL: where to send, or why not. */
type CheckedUrl = { ok: true; origin: string; path: string } | { ok: false; errorKind: 'address_not_allowed' | 'url_not_allowed'; problem: string };

/** Endpoint URLs whose checks are remembered (each endpoint has one; an endpoint changed or gone ages out). */
const CHECKED_URLS_MAX = 10_000;

/**
 * One attempt in flight: undici's handler, the attempt's deadline timer and its answer. A class rather
 * than closures: one object per attempt.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private decided = false;
  private ended = false;
  private controller: Dispatcher.DispatchController | undefined;
  private drained = 0;
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly timeoutMs: number,
    private readonly resolve: (r: { result: AttemptResult; latencyMs: number }) => void,
  ) {
    // Until the response head: the attempt's deadline. After it: the body must end by then too, or
    // the connection is closed (the answer was already decided).
    this.timer = setTimeout(onDeadline, timeoutMs, this);
  }

  decide(result: AttemptResult): void {
    if (this.decided) return;
    this.decided = true;
    this.resolve({ result, latencyMs: Math.round(performance.now() - this.started) });
  }

  deadline(): void {
    const err = new AttemptTimeout(this.timeoutMs);
    this.decide(classify(err, this.timeoutMs));
    this.ended = true;
    this.controller?.abort(err);
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    // Timed out while connecting: never sent.
    if (this.ended) c.abort(new AttemptTimeout(this.timeoutMs));
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, h: Record<string, string | string[] | undefined>): void {
    const retryAfter = h['retry-after'];
    this.decide({ kind: 'response', statusCode, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.drained += chunk.length;
    if (this.drained > MAX_DRAIN_BYTES) {
      this.end();
      c.abort(new Error('response body over the drain limit'));
    }
  }

  onResponseEnd(): void {
    this.end();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.end();
    this.decide(classify(err, this.timeoutMs));
  }
}

function onDeadline(attempt: Attempt): void {
  attempt.deadline();
}

/**
 * Sends webhooks on undici (Node's own HTTP/1.1 client), through its dispatch API: got, the design's
 * client for calls that leave the system, cost about 0.5 ms of CPU per attempt more on this path
 * (docs/decisions.md, "Build and dependencies"). The outbound address policy (@sched/address-policy)
 * is the same as got's guarded instance applied:
 * - the URL passes checkTargetUrl before anything connects (scheme for the mode, no credentials, an IP
 *   literal must be allowed, `localhost` names refused in production mode). Its answer depends on the
 *   URL string, the mode and the rules only, which are fixed for the sender's life, so it is worked out
 *   once per URL and remembered (the checks of the name's addresses are the lookup's, below, on every
 *   connection);
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
  const checkedUrls = new Map<string, CheckedUrl>();

  /** The URL was checked when registered; checked again because the mode or the rules may have changed since. */
  function checkUrl(rawUrl: string): CheckedUrl {
    let checked = checkedUrls.get(rawUrl);
    if (checked !== undefined) return checked;
    const c = checkTargetUrl(rawUrl, opts.mode, WEBHOOK_TARGET_RULES);
    checked = c.ok
      ? { ok: true, origin: c.target.url.origin, path: c.target.url.pathname + c.target.url.search }
      : { ok: false, errorKind: c.problem === 'address_not_allowed' ? 'address_not_allowed' : 'url_not_allowed', problem: c.problem };
    // Oldest first out: an endpoint's URL that is still used comes back at its next attempt.
    if (checkedUrls.size >= CHECKED_URLS_MAX) checkedUrls.delete(checkedUrls.keys().next().value as string);
    checkedUrls.set(rawUrl, checked);
    return checked;
  }

  function send(rawUrl: string, headers: Record<string, string>, body: string): Promise<{ result: AttemptResult; latencyMs: number }> {
    const checked = checkUrl(rawUrl);
    if (!checked.ok) return Promise.resolve({ result: { kind: 'error', errorKind: checked.errorKind, error: checked.problem }, latencyMs: 0 });
    return new Promise((resolve) => {
      agent.dispatch(
        {
          origin: checked.origin,
          path: checked.path,
          method: 'POST',
          headers: { ...headers, 'user-agent': 'sched-webhooks/1', 'content-length': String(Buffer.byteLength(body)) },
          body,
        },
        new Attempt(opts.timeoutMs, resolve),
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
