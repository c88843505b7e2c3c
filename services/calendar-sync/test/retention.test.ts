import { randomBytes } from 'node:crypto';
import { createDb, explainRetentionRule, startRetentionJob } from '@sched/db';
import { createTestDatabase, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import type { Pool } from 'pg';
import { readConfig } from '../src/config';
import { calendarSyncRetentionRules } from '../src/store/retention';

let tdb: TestDatabase;
let pool: Pool;
const config = readConfig({ INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, SECRETS_KEY: randomBytes(32).toString('base64') });
const rules = calendarSyncRetentionRules(config);

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['calendar-sync'] });
  pool = tdb.pool('calendar-sync');
});
afterAll(async () => {
  await tdb?.drop();
});

const ids = async (sql: string): Promise<string[]> => (await pool.query<{ id: string }>(sql)).rows.map((r) => r.id);

describe('calendar-sync retention', () => {
  it('every prune query is served by an index (no sequential scan)', async () => {
    const plans = await Promise.all(rules.map((r) => explainRetentionRule(pool, r)));
    expect(plans[0]).toContain('inbox_received_idx');
    expect(plans[1]).toContain('outbox_published_idx');
    expect(plans[2]).toContain('oauth_states_expires_idx');
    for (const plan of plans) expect(plan).not.toContain('Seq Scan');
  });

  it('prunes inbox rows after 14 days, published outbox rows after 7 and expired OAuth states; keeps younger, unpublished and live rows', async () => {
    await pool.query(`
      INSERT INTO calendar_sync.inbox (event_id, type, received_at) VALUES
        ('wev_in_15d', 'booking.created', now() - interval '15 days'),
        ('wev_in_13d', 'booking.created', now() - interval '13 days');
      INSERT INTO calendar_sync.outbox (id, type, workspace_id, payload, created_at, published_at) VALUES
        ('wev_out_published_8d', 'calendar.synced', 'wsp_1', '{}', now() - interval '8 days', now() - interval '8 days'),
        ('wev_out_published_6d', 'calendar.synced', 'wsp_1', '{}', now() - interval '6 days', now() - interval '6 days'),
        ('wev_out_unpublished_9d', 'calendar.synced', 'wsp_1', '{}', now() - interval '9 days', NULL);
      INSERT INTO calendar_sync.oauth_states (state_hash, workspace_id, host_id, provider, verifier_sealed, expires_at) VALUES
        ('expired', 'wsp_1', 'hst_1', 'google', 'sealed', now() - interval '1 second'),
        ('live', 'wsp_1', 'hst_1', 'google', 'sealed', now() + interval '10 minutes');`);
    const job = startRetentionJob({ db: createDb(pool), rules, intervalMs: 3_600_000, logger: { info: () => undefined, warn: () => undefined } });
    try {
      expect(await job.runOnce()).toEqual({ inbox: 1, outbox: 1, oauth_states: 1 });
    } finally {
      await job.stop();
    }
    expect(await ids('SELECT event_id AS id FROM calendar_sync.inbox')).toEqual(['wev_in_13d']);
    expect(await ids('SELECT id FROM calendar_sync.outbox ORDER BY id')).toEqual(['wev_out_published_6d', 'wev_out_unpublished_9d']);
    expect(await ids('SELECT state_hash AS id FROM calendar_sync.oauth_states')).toEqual(['live']);
  });
});
