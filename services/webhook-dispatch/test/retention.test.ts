import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { createDb, explainRetentionRule, startRetentionJob, type Db } from '@sched/db';
import { createRetentionMetrics } from '@sched/http';
import { createTestDatabase, testAmqp, waitFor, type TestAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import type { Pool } from 'pg';
import { parseDispatchConfig } from '../src/config';
import { webhookDispatchRetentionRules } from '../src/store/retention';
import { cleanupBroker, startDispatch } from './support/dispatch-harness';

let tdb: TestDatabase;
let pool: Pool;
let db: Db;

const required = { SECRETS_KEY: randomBytes(32).toString('base64'), CURSOR_SECRET: 'c'.repeat(32), INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS };
const config = parseDispatchConfig(required);
const rules = webhookDispatchRetentionRules(config);
const quiet = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  tdb = await createTestDatabase({ services: ['webhook-dispatch'] });
  pool = tdb.pool('webhook-dispatch');
  db = createDb(pool);
  await pool.query(`
    INSERT INTO webhook_dispatch.endpoints (id, workspace_id, url, events, secret_sealed)
    VALUES ('whe_ret', 'wsp_ret', 'https://receiver.example.com/hook', '{booking.created}', 'sealed')`);
});
afterAll(async () => {
  await tdb?.drop();
});
beforeEach(async () => {
  await pool.query('DELETE FROM webhook_dispatch.deliveries; DELETE FROM webhook_dispatch.inbox');
});

interface DeliveryRow {
  id: string;
  status: 'pending' | 'succeeded' | 'failed';
  /** Days ago, for each timestamp set; the others stay null. */
  createdDaysAgo?: number;
  succeededDaysAgo?: number;
  failedDaysAgo?: number;
  deadLetterCount?: number;
  deadLetterPending?: boolean;
  lockedUntilFuture?: boolean;
  attempts?: number;
}

const ago = (days: number | undefined) => (days === undefined ? null : new Date(Date.now() - days * 86_400_000).toISOString());

/** Inserts deliveries with their timestamps set directly, each with its attempts (3 unless said). */
async function insertDeliveries(rows: DeliveryRow[]): Promise<void> {
  for (const r of rows) {
    await pool.query(
      `INSERT INTO webhook_dispatch.deliveries
         (id, workspace_id, endpoint_id, event_id, event_type, body, status, created_at, updated_at, succeeded_at, failed_at,
          dead_letter_count, dead_letter_pending, next_attempt_at, locked_until, claim_token)
       VALUES ($1, 'wsp_ret', 'whe_ret', 'wev_' || $1, 'booking.created', '{}', $2, $3, $3, $4, $5, $6, $7,
          CASE WHEN $2 = 'pending' THEN now() END, CASE WHEN $8 THEN now() + interval '1 minute' END, CASE WHEN $8 THEN 'token' END)`,
      [r.id, r.status, ago(r.createdDaysAgo ?? 120), ago(r.succeededDaysAgo), ago(r.failedDaysAgo), r.deadLetterCount ?? 0, r.deadLetterPending ?? false, r.lockedUntilFuture ?? false],
    );
    await pool.query(
      `INSERT INTO webhook_dispatch.attempts (workspace_id, delivery_id, number, attempted_at, latency_ms)
       SELECT 'wsp_ret', $1, n, now(), 5 FROM generate_series(1, $2) n`,
      [r.id, r.attempts ?? 3],
    );
  }
}

async function remaining(): Promise<string[]> {
  return (await pool.query<{ id: string }>('SELECT id FROM webhook_dispatch.deliveries ORDER BY id')).rows.map((r) => r.id);
}

async function attemptsLeft(): Promise<Record<string, number>> {
  const rows = (await pool.query<{ delivery_id: string; n: number }>('SELECT delivery_id, count(*)::int AS n FROM webhook_dispatch.attempts GROUP BY delivery_id')).rows;
  return Object.fromEntries(rows.map((r) => [r.delivery_id, r.n]));
}

function job(registry = new Registry(), over: { batchSize?: number } = {}) {
  return startRetentionJob({ db, rules, intervalMs: 3_600_000, logger: quiet, metrics: createRetentionMetrics(registry), ...over });
}

describe('webhook-dispatch retention', () => {
  it('defaults to 30 days for deliveries, 90 for dead letters and 14 for the inbox, and refuses dead letters kept shorter than deliveries', () => {
    expect(config).toMatchObject({ RETENTION_DELIVERIES_DAYS: 30, RETENTION_DEAD_LETTERS_DAYS: 90, RETENTION_INBOX_DAYS: 14, RETENTION_INTERVAL_MS: 60_000 });
    expect(() => parseDispatchConfig({ ...required, RETENTION_DELIVERIES_DAYS: '60', RETENTION_DEAD_LETTERS_DAYS: '45' })).toThrow(/RETENTION_DEAD_LETTERS_DAYS/);
    expect(parseDispatchConfig({ ...required, RETENTION_DELIVERIES_DAYS: '7', RETENTION_DEAD_LETTERS_DAYS: '7' }).RETENTION_DEAD_LETTERS_DAYS).toBe(7);
  });

  it('every prune query is served by an index (no sequential scan)', async () => {
    const plans = await Promise.all(rules.map((r) => explainRetentionRule(pool, r)));
    expect(plans[0]).toContain('inbox_received_idx');
    expect(plans[1]).toContain('deliveries_succeeded_idx');
    expect(plans[2]).toContain('deliveries_failed_idx');
    for (const plan of plans) expect(plan).not.toContain('Seq Scan');
  });

  it('prunes succeeded deliveries after 30 days with their attempts, keeps younger ones, and never touches pending ones', async () => {
    await insertDeliveries([
      { id: 'whd_succeeded_31d', status: 'succeeded', succeededDaysAgo: 31 },
      { id: 'whd_succeeded_29d', status: 'succeeded', succeededDaysAgo: 29 },
      { id: 'whd_pending_200d', status: 'pending', createdDaysAgo: 200 },
      { id: 'whd_in_flight_100d', status: 'pending', createdDaysAgo: 100, lockedUntilFuture: true },
    ]);
    expect(await job().runOnce()).toEqual({ inbox: 0, deliveries: 1, attempts: 3 });
    expect(await remaining()).toEqual(['whd_in_flight_100d', 'whd_pending_200d', 'whd_succeeded_29d']);
    expect(await attemptsLeft()).toEqual({ whd_in_flight_100d: 3, whd_pending_200d: 3, whd_succeeded_29d: 3 });
  });

  it('keeps dead-lettered deliveries past 30 days until their own 90 days, never while their DLQ message is owed, and prunes a replayed one after the normal period', async () => {
    await insertDeliveries([
      { id: 'whd_dead_31d', status: 'failed', failedDaysAgo: 31, deadLetterCount: 1 },
      { id: 'whd_dead_89d', status: 'failed', failedDaysAgo: 89, deadLetterCount: 1 },
      { id: 'whd_dead_91d', status: 'failed', failedDaysAgo: 91, deadLetterCount: 1 },
      { id: 'whd_dead_91d_dlq_owed', status: 'failed', failedDaysAgo: 91, deadLetterCount: 1, deadLetterPending: true },
      // Stopped because its endpoint was disabled: replayable by range, so kept like a dead letter.
      { id: 'whd_disabled_31d', status: 'failed', failedDaysAgo: 31 },
      // Dead-lettered long ago, then replayed and delivered: the normal period runs from its success.
      { id: 'whd_replayed_ok_31d', status: 'succeeded', createdDaysAgo: 150, succeededDaysAgo: 31, deadLetterCount: 1 },
      { id: 'whd_replayed_ok_10d', status: 'succeeded', createdDaysAgo: 150, succeededDaysAgo: 10, deadLetterCount: 2 },
      // Replayed and still being retried.
      { id: 'whd_replayed_pending', status: 'pending', createdDaysAgo: 150, deadLetterCount: 1 },
    ]);
    expect(await job().runOnce()).toEqual({ inbox: 0, deliveries: 2, attempts: 6 });
    expect(await remaining()).toEqual(['whd_dead_31d', 'whd_dead_89d', 'whd_dead_91d_dlq_owed', 'whd_disabled_31d', 'whd_replayed_ok_10d', 'whd_replayed_pending']);
    expect(Object.keys(await attemptsLeft()).sort()).toEqual(await remaining());
  });

  it('prunes inbox rows after 14 days and keeps younger ones', async () => {
    await pool.query(`
      INSERT INTO webhook_dispatch.inbox (event_id, type, received_at) VALUES
        ('wev_15d', 'booking.created', now() - interval '15 days'),
        ('wev_13d', 'booking.created', now() - interval '13 days'),
        ('wev_now', 'booking.created', now())`);
    expect(await job().runOnce()).toEqual({ inbox: 1, deliveries: 0, attempts: 0 });
    expect((await pool.query('SELECT event_id FROM webhook_dispatch.inbox ORDER BY event_id')).rows.map((r) => r.event_id)).toEqual(['wev_13d', 'wev_now']);
  });

  it('counts pruned rows per table in retention_rows_pruned_total', async () => {
    await insertDeliveries([
      { id: 'whd_a', status: 'succeeded', succeededDaysAgo: 40, attempts: 2 },
      { id: 'whd_b', status: 'failed', failedDaysAgo: 100, deadLetterCount: 1, attempts: 8 },
    ]);
    await pool.query(`INSERT INTO webhook_dispatch.inbox (event_id, type, received_at) VALUES ('wev_old', 'booking.created', now() - interval '20 days')`);
    const registry = new Registry();
    const j = job(registry);
    await j.runOnce();
    await j.stop();
    const values = (await registry.getSingleMetric('retention_rows_pruned_total')!.get()).values;
    expect(Object.fromEntries(values.map((v) => [v.labels.table, v.value]))).toEqual({ inbox: 1, deliveries: 2, attempts: 10 });
  });

  it('two replicas running it at once delete each delivery and attempt once, without errors', async () => {
    const n = 400;
    await pool.query(
      `INSERT INTO webhook_dispatch.deliveries (id, workspace_id, endpoint_id, event_id, event_type, body, status, succeeded_at)
       SELECT 'whd_bulk_' || g, 'wsp_ret', 'whe_ret', 'wev_bulk_' || g, 'booking.created', '{}', 'succeeded', now() - interval '40 days'
       FROM generate_series(1, $1) g`,
      [n],
    );
    await pool.query(
      `INSERT INTO webhook_dispatch.attempts (workspace_id, delivery_id, number, attempted_at, latency_ms)
       SELECT 'wsp_ret', d.id, a, now(), 5 FROM webhook_dispatch.deliveries d, generate_series(1, 2) a`,
    );
    await insertDeliveries([{ id: 'whd_young', status: 'succeeded', succeededDaysAgo: 1 }]);
    const registries = [new Registry(), new Registry()];
    const replicaPools = [tdb.pool('webhook-dispatch'), tdb.adminPool];
    const jobs = registries.map((registry, i) =>
      startRetentionJob({ db: createDb(replicaPools[i]!), rules, intervalMs: 3_600_000, batchSize: 25, logger: quiet, metrics: createRetentionMetrics(registry) }),
    );
    const results = await Promise.all(jobs.map((j) => j.runOnce()));
    await Promise.all(jobs.map((j) => j.stop()));
    expect(results[0]!.deliveries! + results[1]!.deliveries!).toBe(n);
    expect(results[0]!.attempts! + results[1]!.attempts!).toBe(2 * n);
    expect(await remaining()).toEqual(['whd_young']);
  });

  it('runs in the service as main.ts wires it: pruned on its interval, logged once with rows per table, counted in /metrics', async () => {
    const amqp: TestAmqp = testAmqp();
    const service = await startDispatch(tdb, amqp, { RETENTION_INTERVAL_MS: '1000' });
    try {
      await insertDeliveries([{ id: 'whd_in_service', status: 'succeeded', succeededDaysAgo: 31, attempts: 1 }]);
      await waitFor(async () => (await remaining()).length === 0, { timeoutMs: 10_000 });
      await waitFor(async () => service.logs.some((l) => l.includes('"retention pruned rows"')), { timeoutMs: 5_000 });
      const line = JSON.parse(service.logs.find((l) => l.includes('"retention pruned rows"'))!);
      expect(line).toMatchObject({ level: 'info', rows: { deliveries: 1, attempts: 1 } });
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      expect(metrics).toMatch(/retention_rows_pruned_total\{table="deliveries",service="webhook-dispatch"\} 1/);
      expect(metrics).toMatch(/retention_rows_pruned_total\{table="inbox",service="webhook-dispatch"\} 0/);
    } finally {
      await service.stop();
      await cleanupBroker(amqp);
    }
  });
});
