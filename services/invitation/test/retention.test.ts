import { randomBytes } from 'node:crypto';
import { createDb, explainRetentionRule, startRetentionJob } from '@sched/db';
import { createTestDatabase, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import type { Pool } from 'pg';
import { readConfig } from '../src/config';
import { invitationRetentionRules } from '../src/store/retention';

let tdb: TestDatabase;
let pool: Pool;
const config = readConfig({ INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS, SECRETS_KEY: randomBytes(32).toString('base64'), CURSOR_SECRET: 'invitation-test-cursor-secret-0123' });
const rules = invitationRetentionRules(config);

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['invitation'] });
  pool = tdb.pool('invitation');
});
afterAll(async () => {
  await tdb?.drop();
});

const ids = async (sql: string): Promise<string[]> => (await pool.query<{ id: string }>(sql)).rows.map((r) => r.id);

describe('invitation retention', () => {
  it('every prune query is served by an index (no sequential scan)', async () => {
    const plans = await Promise.all(rules.map((r) => explainRetentionRule(pool, r)));
    expect(plans.map((p) => p.match(/(idempotency_keys_expires_idx|inbox_received_idx|outbox_published_idx)/)?.[1])).toEqual([
      'idempotency_keys_expires_idx',
      'inbox_received_idx',
      'outbox_published_idx',
    ]);
    for (const plan of plans) expect(plan).not.toContain('Seq Scan');
  });

  it('prunes expired idempotency keys, old inbox rows and old published outbox rows; keeps the rest, invitations and reservations included', async () => {
    await pool.query(`
      INSERT INTO invitation.idempotency_keys (id, workspace_id, fingerprint, response_status, response_body, expires_at) VALUES
        ('key_expired', 'wsp_1', 'f', 201, '{}', now() - interval '1 second'),
        ('key_live', 'wsp_1', 'f', 201, '{}', now() + interval '1 hour');
      INSERT INTO invitation.inbox (event_id, type, received_at) VALUES
        ('wev_in_15d', 'booking.created', now() - interval '15 days'),
        ('wev_in_1d', 'booking.created', now() - interval '1 day');
      INSERT INTO invitation.outbox (id, type, workspace_id, payload, created_at, published_at) VALUES
        ('wev_out_published_8d', 'invitation.used', 'wsp_1', '{}', now() - interval '8 days', now() - interval '8 days'),
        ('wev_out_unpublished_30d', 'invitation.used', 'wsp_1', '{}', now() - interval '30 days', NULL);
      INSERT INTO invitation.invitations (id, workspace_id, event_type_id, expires_at, max_uses, used_count, metadata, credential_hash, created_at, updated_at)
        VALUES ('biv_old', 'wsp_1', 'evt_1', now() - interval '400 days', 1, 1, '{}', 'h', now() - interval '500 days', now() - interval '500 days');
      INSERT INTO invitation.use_reservations (id, workspace_id, invitation_id, status, start_at, guest_email, expires_at, created_at)
        VALUES ('res_old', 'wsp_1', 'biv_old', 'confirmed', now() - interval '450 days', 'a@example.com', now() - interval '450 days', now() - interval '450 days');`);
    const job = startRetentionJob({ db: createDb(pool), rules, intervalMs: 3_600_000, logger: { info: () => undefined, warn: () => undefined } });
    try {
      expect(await job.runOnce()).toEqual({ idempotency_keys: 1, inbox: 1, outbox: 1 });
    } finally {
      await job.stop();
    }
    expect(await ids('SELECT id FROM invitation.idempotency_keys')).toEqual(['key_live']);
    expect(await ids('SELECT event_id AS id FROM invitation.inbox')).toEqual(['wev_in_1d']);
    expect(await ids('SELECT id FROM invitation.outbox')).toEqual(['wev_out_unpublished_30d']);
    expect(await ids('SELECT id FROM invitation.invitations')).toEqual(['biv_old']);
    expect(await ids('SELECT id FROM invitation.use_reservations')).toEqual(['res_old']);
  });
});
