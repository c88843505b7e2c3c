import { parseRetryAfter, type WebhookAttemptErrorKind } from '@sched/contracts';

/** What one HTTP attempt produced, as the sender reports it. */
export type AttemptResult =
  | { kind: 'response'; statusCode: number; retryAfter?: string }
  | { kind: 'error'; errorKind: Exclude<WebhookAttemptErrorKind, 'http_status' | 'redirect'>; error: string };

/** What happens to the delivery next. */
export type DeliveryDecision =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delayMs: number }
  /** Retries exhausted: `failed`, then dead-lettered. */
  | { kind: 'failed' }
  /** 410 Gone: the receiver asks us to stop; the endpoint is disabled and its pending deliveries fail. */
  | { kind: 'gone' };

export interface RetryPolicy {
  /** Delay before retry n (index n-1); its length + 1 is the number of attempts. */
  scheduleMs: readonly number[];
  jitterRatio: number;
  /** Upper bound of a delay asked for with Retry-After. */
  retryAfterMaxMs: number;
}

export function maxAttempts(policy: RetryPolicy): number {
  return policy.scheduleMs.length + 1;
}

export function jittered(delayMs: number, ratio: number, random: () => number): number {
  return Math.max(0, Math.round(delayMs * (1 + (random() * 2 - 1) * ratio)));
}

/** How an attempt is recorded: the error kind and a short description, null for a success. */
export function describeAttempt(result: AttemptResult): { statusCode: number | null; errorKind: WebhookAttemptErrorKind | null; error: string | null } {
  if (result.kind === 'error') return { statusCode: null, errorKind: result.errorKind, error: result.error };
  const code = result.statusCode;
  if (code >= 200 && code < 300) return { statusCode: code, errorKind: null, error: null };
  if (code >= 300 && code < 400) return { statusCode: code, errorKind: 'redirect', error: `HTTP ${code} (redirects are not followed)` };
  return { statusCode: code, errorKind: 'http_status', error: `HTTP ${code}` };
}

/**
 * decisions.md §11: success is any 2xx; a 3xx is a failure (redirects are not followed, so a target
 * cannot bounce us to an internal address); 410 stops the endpoint; otherwise retry on the schedule,
 * with Retry-After of a 429 or 503 as the next delay (bounded by retryAfterMaxMs, 10 h by default).
 * `roundAttempts` counts this attempt.
 */
export function decideAfterAttempt(result: AttemptResult, roundAttempts: number, policy: RetryPolicy, now: Date, random: () => number): DeliveryDecision {
  if (result.kind === 'response') {
    if (result.statusCode >= 200 && result.statusCode < 300) return { kind: 'succeeded' };
    if (result.statusCode === 410) return { kind: 'gone' };
  }
  if (roundAttempts >= maxAttempts(policy)) return { kind: 'failed' };
  const scheduled = policy.scheduleMs[roundAttempts - 1]!;
  if (result.kind === 'response' && (result.statusCode === 429 || result.statusCode === 503)) {
    const asked = parseRetryAfter(result.retryAfter, now);
    if (asked !== undefined) return { kind: 'retry', delayMs: Math.min(asked, policy.retryAfterMaxMs) };
  }
  return { kind: 'retry', delayMs: jittered(scheduled, policy.jitterRatio, random) };
}
