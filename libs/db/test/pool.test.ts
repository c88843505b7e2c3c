import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { sql } from 'drizzle-orm';
import type { Pool } from 'pg';
import { checkPostgres, createDb, createPool, ensureDatabase, withDatabase, type Db, type DbTx } from '../src';
import { adminQuery, SERVER_URL, tempResources } from './temp-database.helper';

const temp = tempResources();
const pools: Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await temp.cleanup();
});

function pool(url: string, opts: Parameters<typeof createPool>[1] = {}): Pool {
  const p = createPool(url, opts);
  pools.push(p);
  return p;
}

describe('createPool / createDb / checkPostgres', () => {
  it('names its connections and applies the statement timeout', async () => {
    const p = pool(SERVER_URL, { applicationName: 'booking-test', statementTimeoutMs: 1500, max: 2 });
    const { rows } = await p.query(`SELECT current_setting('application_name') AS app, current_setting('statement_timeout') AS timeout`);
    expect(rows[0]).toEqual({ app: 'booking-test', timeout: '1500ms' });
    await expect(p.query('SELECT pg_sleep(3)')).rejects.toMatchObject({ code: '57014' });
  });

  it('logs an idle-client error as JSON instead of crashing the process', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    const p = pool(SERVER_URL, { applicationName: 'booking', logger: createLogger({ service: 'booking', stream }) });
    p.emit('error', new Error('terminating connection due to administrator command'));
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(lines.join(''))).toMatchObject({ level: 'error', message: 'postgres pool client error', application_name: 'booking' });
  });

  it('survives the server ending a checked-out client (a Postgres restart): the query fails, the process does not', async () => {
    const p = pool(SERVER_URL, { logger: { error: () => undefined } });
    const client = await p.connect();
    expect(client.listenerCount('error')).toBeGreaterThan(0);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // (events.once would reject on the 'error' the client emits first.)
    const ended = new Promise<void>((r) => client.once('end', () => r()));
    await adminQuery(SERVER_URL, `SELECT pg_terminate_backend(${rows[0]!.pid})`);
    await ended; // the client has seen its connection go
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release(true);
    expect((await p.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('commits without waiting for the WAL flush only when asked (rate-limit counters)', async () => {
    const setting = async (p: Pool) => (await p.query(`SELECT current_setting('synchronous_commit') AS s`)).rows[0].s;
    expect(await setting(pool(SERVER_URL, { asyncCommit: true }))).toBe('off');
    expect(await setting(pool(SERVER_URL))).toBe('on');
  });

  it('plans every statement generically only when asked, alone or with asynchronous commit', async () => {
    const settings = async (p: Pool) => (await p.query(`SELECT current_setting('plan_cache_mode') AS plans, current_setting('synchronous_commit') AS sync`)).rows[0];
    expect(await settings(pool(SERVER_URL, { genericPlans: true }))).toEqual({ plans: 'force_generic_plan', sync: 'on' });
    expect(await settings(pool(SERVER_URL, { genericPlans: true, asyncCommit: true }))).toEqual({ plans: 'force_generic_plan', sync: 'off' });
    expect(await settings(pool(SERVER_URL))).toEqual({ plans: 'auto', sync: 'on' });
  });

  it('reports readiness: true for a live server, false when nothing listens', async () => {
    await expect(checkPostgres(pool(SERVER_URL))).resolves.toBeUndefined();
    await expect(checkPostgres(pool('postgres://postgres@127.0.0.1:1/postgres'))).rejects.toThrow();
  });

  it('gives a drizzle database whose transactions roll back on error', async () => {
    const db = temp.database();
    await ensureDatabase(db.url);
    const d: Db = createDb(pool(db.url));
    await d.execute(sql`CREATE TABLE t (id int)`);
    const insert = (tx: DbTx) => tx.execute(sql`INSERT INTO t VALUES (1)`);
    await expect(
      d.transaction(async (tx) => {
        await insert(tx);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await d.transaction(insert);
    expect((await d.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM t`)).rows).toEqual([{ n: 1 }]);
  });
});

describe('ensureDatabase', () => {
  it('creates a missing database once, even when asked twice at the same time', async () => {
    const db = temp.database();
    const created = await Promise.all([ensureDatabase(db.url), ensureDatabase(db.url)]);
    expect(created.filter(Boolean)).toHaveLength(1);
    expect(await ensureDatabase(db.url)).toBe(false);
    expect(await adminQuery(withDatabase(SERVER_URL, 'postgres'), 'SELECT 1 AS ok FROM pg_database WHERE datname = $1', [db.name])).toEqual([{ ok: 1 }]);
  });
});
