import { decideAfterAttempt, describeAttempt, jittered, maxAttempts, type RetryPolicy } from '../src/domain/delivery-policy';

const policy: RetryPolicy = { scheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000], jitterRatio: 0, retryAfterMaxMs: 36_000_000 };
const now = new Date('2026-11-22T09:30:00.000Z');
const noJitter = () => 0.5;
const response = (statusCode: number, retryAfter?: string) => ({ kind: 'response' as const, statusCode, ...(retryAfter ? { retryAfter } : {}) });

describe('the retry schedule of decisions.md §11', () => {
  it('makes 8 attempts: the delays 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h between them, then failed', () => {
    expect(maxAttempts(policy)).toBe(8);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => decideAfterAttempt(response(500), n, policy, now, noJitter));
    expect(delays).toEqual(policy.scheduleMs.map((delayMs) => ({ kind: 'retry', delayMs })));
    expect(decideAfterAttempt(response(500), 8, policy, now, noJitter)).toEqual({ kind: 'failed' });
  });

  it('treats any 2xx as success, even on the last attempt', () => {
    for (const code of [200, 201, 202, 204, 299]) expect(decideAfterAttempt(response(code), 8, policy, now, noJitter)).toEqual({ kind: 'succeeded' });
  });

  it('treats a 3xx as a failed attempt (redirects are not followed) and 410 as gone', () => {
    expect(decideAfterAttempt(response(302), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 5_000 });
    expect(describeAttempt(response(302))).toMatchObject({ errorKind: 'redirect', statusCode: 302 });
    expect(decideAfterAttempt(response(410), 1, policy, now, noJitter)).toEqual({ kind: 'gone' });
  });

  it('retries timeouts and connection errors like error statuses', () => {
    const timeout = { kind: 'error' as const, errorKind: 'timeout' as const, error: 'no response' };
    expect(decideAfterAttempt(timeout, 2, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 300_000 });
    expect(describeAttempt(timeout)).toEqual({ statusCode: null, errorKind: 'timeout', error: 'no response' });
  });

  it('spreads each delay by the jitter ratio, never beyond it', () => {
    expect(jittered(10_000, 0.1, () => 0)).toBe(9_000);
    expect(jittered(10_000, 0.1, () => 1)).toBe(11_000);
    const withJitter = { ...policy, jitterRatio: 0.2 };
    for (let i = 0; i < 200; i++) {
      const d = decideAfterAttempt(response(500), 1, withJitter, now, Math.random);
      expect(d.kind === 'retry' && d.delayMs >= 4_000 && d.delayMs <= 6_000).toBe(true);
    }
  });
});

describe('Retry-After on 429 and 503', () => {
  it('becomes the next delay, in seconds or as an HTTP date', () => {
    expect(decideAfterAttempt(response(429, '120'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 120_000 });
    expect(decideAfterAttempt(response(503, 'Sun, 22 Nov 2026 09:31:00 GMT'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 60_000 });
  });

  it('is bounded, ignored when unparsable or on other statuses, and cannot add attempts', () => {
    expect(decideAfterAttempt(response(429, '999999'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 36_000_000 });
    expect(decideAfterAttempt(response(503, 'soon'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 5_000 });
    expect(decideAfterAttempt(response(500, '120'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 5_000 });
    expect(decideAfterAttempt(response(429, '1'), 8, policy, now, noJitter)).toEqual({ kind: 'failed' });
  });

  // The header itself is read by @sched/contracts' parseRetryAfter (its own tests cover every form).
  it('takes delta-seconds and dates, a past date as no wait, and ignores a negative or absent one', () => {
    expect(decideAfterAttempt(response(429, '0'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 0 });
    expect(decideAfterAttempt(response(503, 'Sun, 22 Nov 2026 09:00:00 GMT'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 0 });
    expect(decideAfterAttempt(response(429, '-5'), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 5_000 });
    expect(decideAfterAttempt(response(429), 1, policy, now, noJitter)).toEqual({ kind: 'retry', delayMs: 5_000 });
  });
});
