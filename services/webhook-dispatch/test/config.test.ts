import { TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { randomBytes } from 'node:crypto';
import { parseDispatchConfig } from '../src/config';

const required = { SECRETS_KEY: randomBytes(32).toString('base64'), CURSOR_SECRET: 'c'.repeat(32), INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS };

describe('webhook-dispatch configuration', () => {
  it('defaults to the schedule of decisions.md §11, a 10 s timeout and local mode outside production', () => {
    const c = parseDispatchConfig(required);
    expect(c.WEBHOOK_RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(c.WEBHOOK_TIMEOUT_MS).toBe(10_000);
    expect(c.WEBHOOK_MODE).toBe('local');
    expect(c.WEBHOOK_ROTATION_OVERLAP_MS).toBe(86_400_000);
    expect(c.PORT).toBe(8085);
  });

  it('is in production mode by default when NODE_ENV=production, unless WEBHOOK_MODE says otherwise', () => {
    expect(parseDispatchConfig({ ...required, NODE_ENV: 'production' }).WEBHOOK_MODE).toBe('production');
    expect(parseDispatchConfig({ ...required, NODE_ENV: 'production', WEBHOOK_MODE: 'local' }).WEBHOOK_MODE).toBe('local');
  });

  it('takes a test schedule in milliseconds', () => {
    expect(parseDispatchConfig({ ...required, WEBHOOK_RETRY_SCHEDULE_MS: '50, 100,200' }).WEBHOOK_RETRY_SCHEDULE_MS).toEqual([50, 100, 200]);
  });

  it('refuses missing secrets, a bad key, a bad schedule and a lease shorter than the timeout, naming each', () => {
    expect(() => parseDispatchConfig({})).toThrow(/INTERNAL_AUTH_KEYS: required[\s\S]*CURSOR_SECRET[\s\S]*SECRETS_KEYS: required/);
    expect(() => parseDispatchConfig({ ...required, SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/SECRETS_KEY: the key must be base64 of exactly 32 bytes/);
    for (const bad of ['5s,10s', '0,5', '1,,2']) {
      expect(() => parseDispatchConfig({ ...required, WEBHOOK_RETRY_SCHEDULE_MS: bad })).toThrow(/WEBHOOK_RETRY_SCHEDULE_MS/);
    }
    expect(() => parseDispatchConfig({ ...required, WEBHOOK_TIMEOUT_MS: '20000', WEBHOOK_LEASE_MS: '10000' })).toThrow(/WEBHOOK_LEASE_MS/);
    expect(() => parseDispatchConfig({ ...required, WEBHOOK_JITTER_RATIO: '2' })).toThrow(/WEBHOOK_JITTER_RATIO/);
  });
});
