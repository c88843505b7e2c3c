import type { ServerResponse } from 'node:http';
import { DomainError, type Scope } from '@sched/contracts';
import { setRequestContext, type FastRequest, type FastStep } from '@sched/http';
import type { Logger } from '@sched/logger';
import type { KeyRecord } from '../domain/authorize';
import { requireScope } from '../domain/authorize';
import { CounterBatcher, type AddRequests, type CounterFailure } from '../domain/counter-batcher';
import { decide, windowStart, type RateLimitDecision, type RateLimitPolicy } from '../domain/rate-limit';

export interface ApiKeyAuthDeps {
  authenticate: (authorization: string | undefined) => Promise<KeyRecord>;
  /** authenticate()'s answer at once when it needs no lookup (domain/api-key-auth.ts KeyAuthenticator.cached). */
  authenticateCached?: (authorization: string | undefined) => KeyRecord | undefined;
  /** One upsert adding n requests to a key's window; batched here, one in flight per key and window. */
  addRequests: AddRequests;
  defaultPolicy: RateLimitPolicy;
  logger: Logger;
}

const KEY = Symbol('apiKey');
type WithKey = { [KEY]?: KeyRecord };

function setRateLimitHeaders(res: ServerResponse, d: RateLimitDecision): void {
  res.setHeader('RateLimit-Limit', String(d.limit));
  res.setHeader('RateLimit-Remaining', String(d.remaining));
  res.setHeader('RateLimit-Reset', String(d.resetSeconds));
}

/** The counter store failing must not take the API down with it: the request goes through, loudly. */
function failOpen(policy: RateLimitPolicy): RateLimitDecision {
  return { allowed: true, limit: policy.limit, remaining: policy.limit, resetSeconds: policy.windowSeconds };
}

/**
 * Authenticates the key (401), then counts the request against the key's window (429), before any
 * routing so that unknown paths cost a request too. The window counter is shared by every replica;
 * concurrent requests of a key share one upsert (CounterBatcher), each still getting its exact count.
 */
export function apiKeyAuth(deps: ApiKeyAuthDeps): FastStep {
  const counter = new CounterBatcher(deps.addRequests);
  /**
   * The answer of the counter for one request: the rate-limit headers, then next(), or next(429) over the
   * limit. Made once, not per request.
   */
  const decided = (counted: number | CounterFailure, policy: RateLimitPolicy, now: Date, start: Date, res: ServerResponse, next: (err?: unknown) => void): void => {
    try {
      let decision: RateLimitDecision;
      if (typeof counted === 'number') {
        decision = decide(counted, policy, now, start);
      } else {
        // Logged once per failed batch (by its first request), not once per request.
        if (counted.reportsBatch) deps.logger.error('rate limit counter unavailable; request allowed', { err: counted.error, requests: counted.batchSize });
        decision = failOpen(policy);
      }
      setRateLimitHeaders(res, decision);
      next(decision.allowed ? undefined : new DomainError('rate_limited', { retryAfterSeconds: decision.resetSeconds }));
    } catch (err) {
      next(err);
    }
  };
  /**
   * Counts the request of an authenticated key (429 over the limit). On the counter's promise itself:
   * no async function and no await of our own (each is one more promise, and one more run of the
   * async-context hook, per request).
   */
  const admit = (key: KeyRecord, req: FastRequest, res: ServerResponse, next: (err?: unknown) => void): void => {
    (req as WithKey)[KEY] = key;
    setRequestContext(req, { workspaceId: key.workspaceId, apiKeyId: key.id, principal: 'api_key', scopes: key.scopes });
    const policy = key.rateLimit ?? deps.defaultPolicy;
    const now = new Date();
    const start = windowStart(now, policy.windowSeconds);
    counter.count(key.id, start).then(
      (counted) => decided(counted, policy, now, start, res, next),
      (err: unknown) => next(err ?? new Error('Rejected promise')),
    );
  };
  // A key the cache knows (every request of a busy key) is admitted without first waiting for an
  // authentication promise; only the counter is waited for.
  return (req, res, next) => {
    let key: KeyRecord | undefined;
    try {
      key = deps.authenticateCached?.(req.headers.authorization);
      if (key !== undefined) return admit(key, req, res, next);
    } catch (err) {
      return next(err);
    }
    deps.authenticate(req.headers.authorization).then(
      (found) => {
        try {
          admit(found, req, res, next);
        } catch (err) {
          next(err);
        }
      },
      (err: unknown) => next(err ?? new Error('Rejected promise')),
    );
  };
}

/** 403 when the authenticated key lacks the route's scope; runs after routing, before the body is read. */
export function scopeCheck(scope: Scope): FastStep {
  return (req, _res, next) => {
    const key = (req as WithKey)[KEY];
    if (!key) return next(new DomainError('unauthenticated'));
    try {
      requireScope(key, scope);
      next();
    } catch (err) {
      next(err);
    }
  };
}
