import { createDb, explainRetentionRule, startRetentionJob } from '@sched/db';
import { createTestDatabase, TEST_INTERNAL_AUTH_KEYS, type TestDatabase } from '@sched/testing';
import type { Pool } from 'pg';
import { parseAvailabilityConfig } from '../src/config';
import { availabilityRetentionRules } from '../src/store/retention';

let tdb: TestDatabase;
let pool: Pool;
const config = parseAvailabilityConfig({ CURSOR_SECRET: 'availability-test-cursor-secret-0123', INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS });
const rules = availabilityRetentionRules(config);

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['availability'] });
  pool = tdb.pool('availability');
});
afterAll(async () => {
  await tdb?.drop();
});

describe('availability retention', () => {
  it('prunes inbox rows older than 14 days (index-served) and keeps younger ones', async () => {
    expect(config.RETENTION_INBOX_DAYS).toBe(14);
    const plan = await explainRetentionRule(pool, rules[0]!);
    expect(plan).toContain('inbox_received_idx');
    expect(plan).not.toContain('Seq Scan');
    await pool.query(`
      INSERT INTO availability.inbox (event_id, type, received_at) VALUES
        ('wev_15d', 'booking.created', now() - interval '15 days'),
        ('wev_13d', 'booking.created', now() - interval '13 days')`);
    const job = startRetentionJob({ db: createDb(pool), rules, intervalMs: 3_600_000, logger: { info: () => undefined, warn: () => undefined } });
    try {
      expect(await job.runOnce()).toEqual({ inbox: 1 });
    } finally {
      await job.stop();
    }
    expect((await pool.query('SELECT event_id FROM availability.inbox')).rows).toEqual([{ event_id: 'wev_13d' }]);
  });
});
