import { createDb, explainRetentionRule, startRetentionJob } from '@sched/db';
import { createTestDatabase, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import type { Pool } from 'pg';
import { readConfig } from '../src/config';
import { bookingRetentionRules } from '../src/store/retention';

let tdb: TestDatabase;
let pool: Pool;
const config = readConfig({ INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, CURSOR_SECRET: 'booking-test-cursor-secret-0123456789' });
const rules = bookingRetentionRules(config);

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['booking'] });
  pool = tdb.pool('booking');
});
afterAll(async () => {
  await tdb?.drop();
});

const ids = async (sql: string): Promise<string[]> => (await pool.query<{ id: string }>(sql)).rows.map((r) => r.id);

describe('booking retention', () => {
  it('defaults: inbox 14 days, published outbox 7 days, every minute', () => {
    expect(config).toMatchObject({ RETENTION_INBOX_DAYS: 14, RETENTION_OUTBOX_DAYS: 7, RETENTION_INTERVAL_MS: 60_000, RETENTION_BATCH_SIZE: 1000 });
  });

  it('every prune query is served by an index (no sequential scan)', async () => {
    const plans = await Promise.all(rules.map((r) => explainRetentionRule(pool, r)));
    expect(plans[0]).toContain('idempotency_keys_expires_idx');
    expect(plans[1]).toContain('inbox_received_idx');
    expect(plans[2]).toContain('outbox_published_idx');
    for (const plan of plans) expect(plan).not.toContain('Seq Scan');
  });

  it('prunes expired idempotency keys, inbox rows after 14 days and published outbox rows after 7 days; keeps younger and unpublished rows', async () => {
    await pool.query(`
      INSERT INTO booking.idempotency_keys (id, workspace_id, fingerprint, response_status, response_body, expires_at) VALUES
        ('key_expired', 'wsp_1', 'f', 201, '{}', now() - interval '1 second'),
        ('key_live', 'wsp_1', 'f', 201, '{}', now() + interval '1 hour');
      INSERT INTO booking.inbox (event_id, type, received_at) VALUES
        ('wev_in_15d', 'calendar.synced', now() - interval '15 days'),
        ('wev_in_13d', 'calendar.synced', now() - interval '13 days');
      INSERT INTO booking.outbox (id, type, workspace_id, payload, created_at, published_at) VALUES
        ('wev_out_published_8d', 'booking.created', 'wsp_1', '{}', now() - interval '8 days', now() - interval '8 days'),
        ('wev_out_published_6d', 'booking.created', 'wsp_1', '{}', now() - interval '8 days', now() - interval '6 days'),
        ('wev_out_unpublished_30d', 'booking.created', 'wsp_1', '{}', now() - interval '30 days', NULL);`);
    const job = startRetentionJob({ db: createDb(pool), rules, intervalMs: 3_600_000, logger: { info: () => undefined, warn: () => undefined } });
    try {
      expect(await job.runOnce()).toEqual({ idempotency_keys: 1, inbox: 1, outbox: 1 });
    } finally {
      await job.stop();
    }
    expect(await ids('SELECT id FROM booking.idempotency_keys')).toEqual(['key_live']);
    expect(await ids('SELECT event_id AS id FROM booking.inbox')).toEqual(['wev_in_13d']);
    expect(await ids('SELECT id FROM booking.outbox ORDER BY id')).toEqual(['wev_out_published_6d', 'wev_out_unpublished_30d']);
  });
});
