import { createDb, explainRetentionRule, startRetentionJob } from '@sched/db';
import { createTestDatabase, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import type { Pool } from 'pg';
import { readConfig } from '../src/config';
import { gatewayRetentionRules } from '../src/store/retention';

let tdb: TestDatabase;
let pool: Pool;
const config = readConfig({ INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, ADMIN_TOKEN: 'gateway-retention-test-admin-token-0123456789' });

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['gateway'] });
  pool = tdb.pool('gateway');
});
afterAll(async () => {
  await tdb?.drop();
});

describe('gateway retention', () => {
  it('keeps rate-limit windows twice the longest window a key can have (2 h), or the configured one when longer', () => {
    expect(gatewayRetentionRules(config)[0]!.retentionMs).toBe(7_200_000);
    expect(gatewayRetentionRules({ ...config, BOOKING_PAGE_RATE_WINDOW_SECONDS: 7200 })[0]!.retentionMs).toBe(14_400_000);
    expect(gatewayRetentionRules({ ...config, OAUTH_CALLBACK_RATE_WINDOW_SECONDS: 10_800 })[0]!.retentionMs).toBe(21_600_000);
  });

  it('prunes windows that started over 2 h ago (index-served) and keeps the others', async () => {
    const rules = gatewayRetentionRules(config);
    const plan = await explainRetentionRule(pool, rules[0]!);
    expect(plan).toContain('rate_limit_window_idx');
    expect(plan).not.toContain('Seq Scan');
    await pool.query(`
      INSERT INTO gateway.rate_limit_counters (key_id, window_start, count) VALUES
        ('key_a', now() - interval '3 hours', 5),
        ('ip:10.0.0.1', now() - interval '121 minutes', 1),
        ('key_a', now() - interval '1 hour', 7),
        ('key_a', now(), 1)`);
    const job = startRetentionJob({ db: createDb(pool), rules, intervalMs: 3_600_000, logger: { info: () => undefined, warn: () => undefined } });
    try {
      expect(await job.runOnce()).toEqual({ rate_limit_counters: 2 });
    } finally {
      await job.stop();
    }
    expect((await pool.query('SELECT count FROM gateway.rate_limit_counters ORDER BY count')).rows).toEqual([{ count: 1 }, { count: 7 }]);
  });
});
