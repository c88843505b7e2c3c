import http from 'node:http';
import https from 'node:https';
import got, { type Got, type Options } from 'got';
import { AddressNotAllowedError, guardedLookup, systemResolveAll, type ResolveAll } from './guarded-lookup';
import { checkTargetUrl, type TargetRules, type UrlProblem } from './target-url';
import type { AddressMode } from './address';

/** A URL this mode's rules refuse (scheme, credentials, format); nothing was sent. */
export class UrlNotAllowedError extends Error {
  readonly code = 'EURLNOTALLOWED';
  constructor(readonly problem: Exclude<UrlProblem, 'address_not_allowed'>) {
    super(`not a URL this service connects to (${problem})`);
    this.name = 'UrlNotAllowedError';
  }
}

export interface GuardedGotOptions {
  mode: AddressMode;
  /** Schemes allowed in production mode (checkTargetUrl). */
  rules: TargetRules;
  /** DNS of the guarded lookup; tests fake it. */
  resolveAll?: ResolveAll;
  /** Options of the keep-alive agents (one per scheme), e.g. an idle timeout. */
  agent?: http.AgentOptions;
}

export interface GuardedGot {
  /** got with the guard in place; callers add method, headers, body, timeout, redirects and retries. */
  got: Got;
  /**
   * The error a call failed with, as the policy's own error when the policy refused it (got 11 wraps
   * every error in its RequestError and keeps only the code): AddressNotAllowedError or
   * UrlNotAllowedError, else `err` unchanged.
   */
  policyError(err: unknown): unknown;
  /** Frees pooled sockets; call on shutdown. */
  close(): void;
}

/**
 * got for calls that leave the system (webhook receivers, CalDAV servers), with the outbound address
 * policy (docs/security.md) on every connection:
 * - every URL, the first and each redirect got is about to follow, passes checkTargetUrl before anything
 *   connects (scheme, no credentials, an IP literal must be allowed, `localhost` names refused in
 *   production mode): a beforeRequest hook;
 * - every name is resolved by guardedLookup (got 11's `lookup` option, `dnsLookup` in got 12+), which
 *   refuses it when any of its addresses is not allowed and hands the socket exactly the addresses it
 *   checked (no second DNS answer, so no rebinding);
 * - keep-alive agents per scheme, no retries, redirects not followed, statuses returned rather than
 *   thrown, nothing asked compressed and no user-agent of got's: callers turn on what they need.
 */
export function createGuardedGot(opts: GuardedGotOptions): GuardedGot {
  const lookup = guardedLookup(opts.mode, opts.resolveAll ?? systemResolveAll);
  const agent = { http: new http.Agent({ keepAlive: true, ...opts.agent }), https: new https.Agent({ keepAlive: true, ...opts.agent }) };
  // The refusal a hook threw, by the options of the request it refused (got's errors carry them).
  const refusals = new WeakMap<object, Error>();
  const check = (options: Options) => {
    const url = options.url as URL;
    const checked = checkTargetUrl(url.href, opts.mode, opts.rules);
    if (checked.ok) return;
    const refusal = checked.problem === 'address_not_allowed' ? new AddressNotAllowedError(url.hostname) : new UrlNotAllowedError(checked.problem);
    refusals.set(options, refusal);
    throw refusal;
  };
  const instance = got.extend({
    lookup: lookup as unknown as Options['lookup'],
    agent,
    retry: { limit: 0 },
    followRedirect: false,
    decompress: false,
    throwHttpErrors: false,
    headers: { 'user-agent': undefined },
    // got runs beforeRequest for each redirect it follows too (after the caller's beforeRedirect hooks).
    hooks: { beforeRequest: [check] },
  });
  return {
    got: instance,
    policyError(err) {
      const options = (err as { options?: unknown } | null)?.options;
      if (typeof options === 'object' && options !== null) {
        const refusal = refusals.get(options);
        if (refusal) return refusal;
        // Refused by the guarded lookup, inside node's socket: only the code comes through.
        const url = (options as { url?: unknown }).url;
        if ((err as { code?: unknown }).code === 'EADDRNOTALLOWED' && url instanceof URL) return new AddressNotAllowedError(url.hostname);
      }
      return err;
    },
    close() {
      agent.http.destroy();
      agent.https.destroy();
    },
  };
}
