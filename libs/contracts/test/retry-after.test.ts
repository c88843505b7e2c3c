import { parseRetryAfter, parseRetryAfterSeconds } from '../src';

const now = Date.parse('2026-11-22T09:30:00.000Z');

describe('parseRetryAfter', () => {
  it('reads delay-seconds as milliseconds, surrounding whitespace allowed', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('0005', now)).toBe(5_000);
  });

  it('reads an HTTP-date in its three forms as the time until then, a past date as 0', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:31:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sunday, 22-Nov-26 09:31:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sun Nov 22 09:31:00 2026', new Date(Date.parse('2026-11-22T09:30:00')))).toBe(60_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:31:00 GMT', new Date(now))).toBe(60_000);
  });

  it('is undefined when absent, empty or unreadable', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('   ', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('Sun, 99 Nov 2026 99:99:99 GMT', now)).toBeUndefined();
    expect(parseRetryAfter('0x10', now)).toBeUndefined();
    expect(parseRetryAfter('1e3', now)).toBeUndefined();
    // A bare year is not a date.
    expect(parseRetryAfter('2027-', now)).toBeUndefined();
  });

  it('refuses negative and fractional numbers (the header has no such form)', () => {
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('-0', now)).toBeUndefined();
    expect(parseRetryAfter('+5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });

  it('caps a huge value at the largest safe integer instead of Infinity', () => {
    expect(parseRetryAfter('999999', now)).toBe(999_999_000);
    expect(parseRetryAfter('9'.repeat(30), now)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('reads the first value of a header sent twice', () => {
    expect(parseRetryAfter(['3', '9'], now)).toBe(3_000);
    expect(parseRetryAfter([], now)).toBeUndefined();
  });

  it('defaults now to the current time', () => {
    const inOneMinute = new Date(Date.now() + 60_000).toUTCString();
    const ms = parseRetryAfter(inOneMinute)!;
    expect(ms).toBeGreaterThan(55_000);
    expect(ms).toBeLessThanOrEqual(60_000);
  });
});

describe('parseRetryAfterSeconds', () => {
  it('rounds up to whole seconds and keeps undefined', () => {
    expect(parseRetryAfterSeconds('7', now)).toBe(7);
    expect(parseRetryAfterSeconds('Sun, 22 Nov 2026 09:30:01 GMT', now - 500)).toBe(2);
    expect(parseRetryAfterSeconds('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterSeconds('-1', now)).toBeUndefined();
    expect(parseRetryAfterSeconds(undefined, now)).toBeUndefined();
  });
});
