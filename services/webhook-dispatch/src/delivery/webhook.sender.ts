import http from 'node:http';
import https from 'node:https';
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

function classify(err: unknown): AttemptResult {
  if (err instanceof AddressNotAllowedError) return { kind: 'error', errorKind: 'address_not_allowed', error: err.message };
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const detail = redactString(code ?? (err instanceof Error ? err.message : String(err))).slice(0, 200);
  if (code && DNS_CODES.has(code)) return { kind: 'error', errorKind: 'dns', error: detail };
  return { kind: 'error', errorKind: 'connection', error: detail };
}

/**
 * Sends webhooks with node's own http(s) client: one bounded request, redirects never followed,
 * every connection made through the guarded lookup, keep-alive per origin so a busy receiver does
 * not pay a TLS handshake per event.
 */
export function createWebhookSender(opts: SenderOptions): WebhookSender {
  const lookup = guardedLookup(opts.mode, opts.resolveAll ?? systemResolveAll);
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

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
    const client = url.protocol === 'https:' ? https : http;

    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        resolve(done(result));
      };
      const req = client.request(url, {
        method: 'POST',
        agent: agents[url.protocol as 'http:' | 'https:'],
        lookup,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'sched-webhooks/1' },
      });
      // One deadline for DNS, connect, TLS and the response head (decisions.md §11: a 2xx within 10 s).
      const timer = setTimeout(() => {
        finish({ kind: 'error', errorKind: 'timeout', error: `no response within ${opts.timeoutMs} ms` });
        req.destroy();
      }, opts.timeoutMs);
      req.on('response', (res) => {
        const retryAfter = res.headers['retry-after'];
        finish({ kind: 'response', statusCode: res.statusCode ?? 0, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
        let drained = 0;
        res.on('data', (chunk: Buffer) => {
          drained += chunk.length;
          if (drained > MAX_DRAIN_BYTES) req.destroy();
        });
        res.on('error', () => undefined);
        res.on('close', () => clearTimeout(timer));
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        finish(classify(err));
      });
      req.end(body);
    });
  }

  return {
    send,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
