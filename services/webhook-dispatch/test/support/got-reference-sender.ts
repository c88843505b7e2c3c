// The got sender webhook-dispatch used before undici (docs/decisions.md, "Build and dependencies").
import { AddressNotAllowedError, checkTargetUrl, createGuardedGot } from '@sched/address-policy';
import { redactString } from '@sched/logger';
import type { AttemptResult } from '../../src/domain/delivery-policy';
import { WEBHOOK_TARGET_RULES } from '../../src/domain/webhook-endpoints';
import type { SenderOptions, WebhookSender } from '../../src/delivery/webhook.sender';

/** The receiver's body is never used; reading more than this just to keep a socket would be waste. */
const MAX_DRAIN_BYTES = 64 * 1024;
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL', 'ENOTIMP', 'EREFUSED']);

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
 * The sender as it was before undici (src/delivery/webhook.sender.ts), kept as the reference the sender
 * tests compare requests and results with: sends webhooks with got (the design's client for calls that leave the system), through the outbound
 * address policy's guarded instance (@sched/address-policy createGuardedGot): every connection made
 * through the guarded lookup, keep-alive per origin so a busy receiver does not pay a TLS handshake per
 * event, no retries (the delivery schedule owns them), redirects never followed. The attempt is decided
 * by the response head; got's request timeout is the one deadline for DNS, connect, TLS and that head
 * (decisions.md §11: a 2xx within 10 s), and ends the connection if the body is still coming then.
 */
export function createGotReferenceSender(opts: SenderOptions): WebhookSender {
  const client = createGuardedGot({ mode: opts.mode, rules: WEBHOOK_TARGET_RULES, resolveAll: opts.resolveAll });

  function send(rawUrl: string, headers: Record<string, string>, body: string): Promise<{ result: AttemptResult; latencyMs: number }> {
    const started = performance.now();
    const done = (result: AttemptResult) => ({ result, latencyMs: Math.round(performance.now() - started) });
    // The URL was checked when registered; checked again because the mode or the rules may have changed since.
    const checked = checkTargetUrl(rawUrl, opts.mode, WEBHOOK_TARGET_RULES);
    if (!checked.ok) {
      const errorKind = checked.problem === 'address_not_allowed' ? 'address_not_allowed' : 'url_not_allowed';
      return Promise.resolve(done({ kind: 'error', errorKind, error: checked.problem }));
    }

    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        resolve(done(result));
      };
      const stream = client.got.stream.post(checked.target.url, {
        headers: { ...headers, 'user-agent': 'sched-webhooks/1' },
        body,
        timeout: { request: opts.timeoutMs },
      });
      stream.on('response', (res: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
        const retryAfter = res.headers['retry-after'];
        finish({ kind: 'response', statusCode: res.statusCode, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
      });
      let drained = 0;
      stream.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > MAX_DRAIN_BYTES) stream.destroy();
      });
      stream.on('error', (err: unknown) => finish(classify(client.policyError(err), opts.timeoutMs)));
    });
  }

  return { send, close: () => client.close() };
}
