import { sql } from 'drizzle-orm';
import { bigserial, pgSchema, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import type { Pool } from 'pg';
import { createDb, createPool, explainRetentionRule, pruneTable, startRetentionJob, type Db, type RetentionRule } from '../src';
import { tempResources } from './temp-database.helper';
// By path: @sched/testing depends on this package.
import { waitFor } from '../../testing/src/wait-for';

const ret = pgSchema('ret');
const events = ret.table('events', {
  id: text('id').primaryKey(),
  kind: text('kind').notNull(),
  at: timestamp('at', { withTimezone: true }).notNull(),
});
const notes = ret.table('notes', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  eventId: text('event_id').notNull(),
});
const windows = ret.table(
  'windows',
  {
    key: text('key').notNull(),
    start: timestamp('start', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.start] })],
);

const DAY = 86_400_000;
const temp = tempResources();
let pools: Pool[] = [];
let db: Db;
let pool: Pool;
let url: string;

beforeAll(async () => {
  url = (await temp.create()).url;
  pool = open();
  db = createDb(pool);
  await pool.query(`
    CREATE SCHEMA ret;
    CREATE TABLE ret.events (id text PRIMARY KEY, kind text NOT NULL, at timestamptz NOT NULL);
    CREATE INDEX events_at_idx ON ret.events (at);
    CREATE TABLE ret.notes (id bigserial PRIMARY KEY, event_id text NOT NULL REFERENCES ret.events (id) ON DELETE CASCADE);
    CREATE INDEX notes_event_idx ON ret.notes (event_id);
    CREATE TABLE ret.windows (key text NOT NULL, start timestamptz NOT NULL, PRIMARY KEY (key, start));
    CREATE INDEX windows_start_idx ON ret.windows (start);`);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  pools = [];
  await temp.cleanup();
});
beforeEach(async () => {
  await pool.query('TRUNCATE ret.events, ret.notes, ret.windows');
});

function open(): Pool {
  const p = createPool(url, { max: 4, logger: { error: () => undefined } });
  pools.push(p);
  return p;
}

/** Inserts events `prefix0..n-1` aged `ageDays` (the timestamp set directly). */
async function insertEvents(prefix: string, n: number, ageDays: number, kind = 'k'): Promise<void> {
  await pool.query(
    `INSERT INTO ret.events (id, kind, at) SELECT $1 || g, $2, now() - make_interval(secs => $3::float8) FROM generate_series(0, $4 - 1) g`,
    [prefix, kind, (ageDays * DAY) / 1000, n],
  );
}

async function ids(): Promise<string[]> {
  return (await pool.query<{ id: string }>('SELECT id FROM ret.events ORDER BY id')).rows.map((r) => r.id);
}

const rule = (over: Partial<RetentionRule> = {}): RetentionRule => ({ table: events, ageColumn: events.at, retentionMs: 30 * DAY, ...over });

describe('pruneTable', () => {
  it('deletes the rows older than the period and keeps the younger ones', async () => {
    await insertEvents('old', 3, 31);
    await insertEvents('young', 2, 29);
    expect(await pruneTable(db, rule())).toEqual({ events: 3 });
    expect(await ids()).toEqual(['young0', 'young1']);
    expect(await pruneTable(db, rule())).toEqual({ events: 0 });
  });

  it('deletes only the rows matching the rule’s condition', async () => {
    await insertEvents('keep', 2, 40, 'pinned');
    await insertEvents('go', 2, 40, 'done');
    expect(await pruneTable(db, rule({ where: sql`kind = 'done'` }))).toEqual({ events: 2 });
    expect(await ids()).toEqual(['keep0', 'keep1']);
  });

  it('with a period of 0 treats the column as an expiry: rows go once it has passed', async () => {
    await insertEvents('expired', 2, 0.001);
    await insertEvents('live', 1, -1);
    expect(await pruneTable(db, rule({ retentionMs: 0 }))).toEqual({ events: 2 });
    expect(await ids()).toEqual(['live0']);
  });

  it('deletes child rows with their parent in the same statement and counts them under their own label', async () => {
    await insertEvents('old', 2, 31);
    await insertEvents('young', 1, 1);
    await pool.query(`INSERT INTO ret.notes (event_id) SELECT id FROM ret.events, generate_series(1, 3)`);
    const deleted = await pruneTable(db, rule({ children: [{ table: notes, column: notes.eventId }] }));
    expect(deleted).toEqual({ events: 2, notes: 6 });
    expect((await pool.query(`SELECT event_id, count(*)::int AS n FROM ret.notes GROUP BY event_id`)).rows).toEqual([{ event_id: 'young0', n: 3 }]);
  });

  it('works on a composite primary key', async () => {
    await pool.query(`INSERT INTO ret.windows VALUES ('a', now() - interval '3 hours'), ('b', now() - interval '3 hours'), ('a', now())`);
    expect(await pruneTable(db, { table: windows, ageColumn: windows.start, retentionMs: 2 * 3_600_000 })).toEqual({ windows: 2 });
    expect((await pool.query(`SELECT key FROM ret.windows`)).rows).toEqual([{ key: 'a' }]);
  });

  it('deletes in batches of at most batchSize rows, and at most maxBatches of them per call', async () => {
    await insertEvents('old', 5, 31);
    const batches: number[] = [];
    expect(await pruneTable(db, rule(), { batchSize: 2, maxBatches: 1, onBatch: (d) => batches.push(d.events!) })).toEqual({ events: 2 });
    expect(await ids()).toHaveLength(3);
    expect(await pruneTable(db, rule(), { batchSize: 2, onBatch: (d) => batches.push(d.events!) })).toEqual({ events: 3 });
    expect(batches).toEqual([2, 2, 1]);
  });

  it('is served by an index on the age column', async () => {
    const plan = await explainRetentionRule(pool, rule());
    expect(plan).toContain('events_at_idx');
    expect(plan).not.toContain('Seq Scan');
  });

  it('run by several replicas at once deletes every row exactly once, without errors or waiting', async () => {
    await insertEvents('old', 3000, 31);
    await insertEvents('young', 10, 1);
    const replicas = [open(), open(), open()].map((p) => createDb(p));
    const results = await Promise.all(replicas.flatMap((r) => [pruneTable(r, rule(), { batchSize: 50 }), pruneTable(r, rule(), { batchSize: 50 })]));
    expect(results.reduce((sum, r) => sum + r.events!, 0)).toBe(3000);
    expect(await ids()).toHaveLength(10);
  });
});

describe('startRetentionJob', () => {
  function recorder() {
    const logs: Array<{ level: string; message: string; meta?: Record<string, unknown> }> = [];
    const metric = new Map<string, number>();
    return {
      logs,
      metric,
      logger: {
        info: (message: string, meta?: Record<string, unknown>) => logs.push({ level: 'info', message, meta }),
        warn: (message: string, meta?: Record<string, unknown>) => logs.push({ level: 'warn', message, meta }),
      },
      metrics: { pruned: (table: string, rows: number) => void metric.set(table, (metric.get(table) ?? 0) + rows) },
    };
  }

  it('runs every rule, counts rows per table in the metric, and logs one line per run that pruned something', async () => {
    await insertEvents('old', 4, 31);
    await pool.query(`INSERT INTO ret.notes (event_id) SELECT id FROM ret.events`);
    await pool.query(`INSERT INTO ret.windows VALUES ('a', now() - interval '3 hours')`);
    const r = recorder();
    const job = startRetentionJob({
      db,
      rules: [rule({ children: [{ table: notes, column: notes.eventId }] }), { table: windows, ageColumn: windows.start, retentionMs: 7_200_000, label: 'rate_windows' }],
      intervalMs: 3_600_000,
      batchSize: 3,
      logger: r.logger,
      metrics: r.metrics,
    });
    try {
      // Every series exists before anything was pruned.
      expect(Object.fromEntries(r.metric)).toEqual({ events: 0, notes: 0, rate_windows: 0 });
      expect(await job.runOnce()).toEqual({ events: 4, notes: 4, rate_windows: 1 });
      expect(Object.fromEntries(r.metric)).toEqual({ events: 4, notes: 4, rate_windows: 1 });
      expect(r.logs).toEqual([{ level: 'info', message: 'retention pruned rows', meta: { rows: { events: 4, notes: 4, rate_windows: 1 } } }]);

      await job.runOnce(); // nothing left: no line
      expect(r.logs).toHaveLength(1);
    } finally {
      await job.stop();
    }
  });

  it('logs a failing rule and still runs the others', async () => {
    await insertEvents('old', 1, 31);
    const broken = pgSchema('ret').table('missing', { id: text('id').primaryKey(), at: timestamp('at', { withTimezone: true }).notNull() });
    const r = recorder();
    const job = startRetentionJob({ db, rules: [{ table: broken, ageColumn: broken.at, retentionMs: 0 }, rule()], intervalMs: 3_600_000, logger: r.logger, metrics: r.metrics });
    try {
      expect(await job.runOnce()).toEqual({ events: 1 });
      expect(r.logs.map((l) => [l.level, l.message, l.meta?.table])).toEqual([
        ['warn', 'retention: pruning failed; retrying at the next run', 'missing'],
        ['info', 'retention pruned rows', undefined],
      ]);
    } finally {
      await job.stop();
    }
  });

  it('runs on its interval', async () => {
    await insertEvents('old', 2, 31);
    const r = recorder();
    const job = startRetentionJob({ db, rules: [rule()], intervalMs: 50, logger: r.logger });
    try {
      await waitFor(async () => (await ids()).length === 0, { intervalMs: 20 });
    } finally {
      await job.stop();
    }
  });
});
