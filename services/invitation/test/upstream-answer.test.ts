import type { InternalResponse } from '@sched/http';
import { answerError } from '../src/http/upstream-answer';

const answer = (retryAfter?: string): InternalResponse<unknown> => ({
  status: 503,
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  body: { error: { code: 'calendar_unavailable', message: 'calendar down', details: [] } },
});

describe('answerError: another service\'s Retry-After', () => {
  it('keeps delay-seconds, reads an HTTP date as the seconds until then (rounded up)', () => {
    expect(answerError(answer('7')).retryAfterSeconds).toBe(7);
    const inAMinute = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000).toUTCString();
    const seconds = answerError(answer(inAMinute)).retryAfterSeconds!;
    expect(seconds).toBeGreaterThanOrEqual(55);
    expect(seconds).toBeLessThanOrEqual(61);
  });

  it('leaves it out when absent, empty, negative or unreadable', () => {
    for (const value of [undefined, '', '-1', '1.5', 'soon']) {
      const err = answerError(answer(value));
      expect([value, err.code, err.retryAfterSeconds]).toEqual([value, 'calendar_unavailable', undefined]);
    }
  });
});
