/** Fixed-window rate limiting (decisions.md §12); the counter itself lives in Postgres so replicas share it. */
export interface RateLimitPolicy {
  limit: number;
  windowSeconds: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (RateLimit-Reset, Retry-After). */
  resetSeconds: number;
}

export function windowStart(now: Date, windowSeconds: number): Date {
  const ms = windowSeconds * 1000;
  return new Date(Math.floor(now.getTime() / ms) * ms);
}

/** `windowStartedAt`: the window's start when the caller has it already (windowStart(now, policy.windowSeconds)). */
export function decide(count: number, policy: RateLimitPolicy, now: Date, windowStartedAt: Date = windowStart(now, policy.windowSeconds)): RateLimitDecision {
  const start = windowStartedAt.getTime();
  const resetSeconds = Math.max(1, Math.ceil((start + policy.windowSeconds * 1000 - now.getTime()) / 1000));
  return {
    allowed: count <= policy.limit,
    limit: policy.limit,
    remaining: Math.max(0, policy.limit - count),
    resetSeconds,
  };
}
