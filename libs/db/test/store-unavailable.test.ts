import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { Pool } from 'pg';
import { createDb, createPool, isStoreUnavailable, storeUnavailable, withCredentials } from '../src';
import { adminQuery, randomName, SERVER_URL, tempResources } from './temp-database.helper';
// By path: @sched/testing depends on this package.
import { waitFor } from '../../testing/src/wait-for';

const temp = tempResources();
const pools: Pool[] = [];
const quiet = { error: () => undefined };
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  await temp.cleanup();
});

function pool(url: string, opts: ConstructorParameters<typeof Pool>[0] = {}): Pool {
  const p = new Pool({ connectionString: url, ...opts });
  p.on('error', () => undefined);
  pools.push(p);
  return p;
}

/** The error a promise rejects with (the test fails if it resolves). */
async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

/** A port where nothing listens: bound, then closed again. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('storeUnavailable: errors of a real Postgres that cannot serve', () => {
  it('connection refused, also through drizzle (which wraps the driver error as cause)', async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`;
    const raw = await failure(pool(url).query('SELECT 1'));
    expect(storeUnavailable(raw)).toEqual({ reason: expect.stringContaining('ECONNREFUSED') });
    const wrapped = await failure(createDb(createPool(url, { logger: quiet })).execute(sql`SELECT 1`));
    expect((wrapped as Error).message).toMatch(/^Failed query/);
    expect(isStoreUnavailable(wrapped)).toBe(true);
  });

  it('a server that ends the connection under the client (Connection terminated unexpectedly)', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const err = await failure(pool(`postgres://postgres@127.0.0.1:${(server.address() as AddressInfo).port}/postgres`).query('SELECT 1'));
      expect(storeUnavailable(err)).toEqual({ store: 'postgres', reason: expect.stringMatching(/^Connection terminated/) });
    } finally {
      server.close();
    }
  });

  it('a session ended by the server (57P01, as in a restart or failover) mid-query', async () => {
    const p = pool(SERVER_URL, { application_name: 'store-unavailable-test' });
    const client = await p.connect();
    client.on('error', () => undefined);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const query = failure(client.query('SELECT pg_sleep(10)'));
    // Mid-query: the server shows the statement running before it is ended.
    await waitFor(async () => (await adminQuery(SERVER_URL, `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`, [rows[0]!.pid])).length === 1);
    await adminQuery(SERVER_URL, 'SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    const err = await query;
    client.release(true);
    expect(storeUnavailable(err)).toEqual({ store: 'postgres', reason: 'SQLSTATE 57P01' });
  });

  it('too many connections (53300) and the pool timing out waiting for a connection', async () => {
    const role = temp.role(randomName('t_full_'));
    await adminQuery(SERVER_URL, `CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
    const full = await failure(pool(withCredentials(SERVER_URL, role)).query('SELECT 1'));
    expect(storeUnavailable(full)).toEqual({ store: 'postgres', reason: 'SQLSTATE 53300' });

    const busy = pool(SERVER_URL, { max: 1, connectionTimeoutMillis: 100 });
    const held = await busy.connect();
    const timedOut = await failure(busy.query('SELECT 1'));
    held.release();
    expect(storeUnavailable(timedOut)).toEqual({ store: 'postgres', reason: 'timeout exceeded when trying to connect' });
  });
});

describe('storeUnavailable: what is not an outage stays a 500', () => {
  it('constraint violations, syntax errors and statement timeouts of a live server', async () => {
    const p = pool(SERVER_URL, { statement_timeout: 100 });
    const unique = await failure(p.query('CREATE TEMP TABLE u (x int PRIMARY KEY); INSERT INTO u VALUES (1), (1)'));
    expect(unique).toMatchObject({ code: '23505' });
    const syntax = await failure(p.query('SELEC 1'));
    const slow = await failure(p.query('SELECT pg_sleep(2)'));
    expect(slow).toMatchObject({ code: '57014' });
    const drizzleSyntax = await failure(createDb(p).execute(sql`SELEC 1`));
    for (const err of [unique, syntax, slow, drizzleSyntax]) expect([(err as Error).message, storeUnavailable(err)]).toEqual([(err as Error).message, undefined]);
  });

  it('plain errors that only mention a connection, and an upstream service failing (UpstreamError: 502/504)', () => {
    expect(storeUnavailable(new Error('connect ECONNREFUSED db.internal:5432'))).toBeUndefined();
    const upstream = Object.assign(new Error('upstream booking: unreachable', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }), { name: 'UpstreamError' });
    expect(storeUnavailable(upstream)).toBeUndefined();
    expect(storeUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeUndefined();
    expect(storeUnavailable(undefined)).toBeUndefined();
    expect(storeUnavailable('ECONNREFUSED')).toBeUndefined();
  });
});

describe('storeUnavailable: the codes and messages it knows', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])('socket error %s', (code) => {
    expect(isStoreUnavailable(withCode(code))).toBe(true);
  });

  it.each(['08000', '08001', '08003', '08006', '08P01', '57P01', '57P02', '57P03', '53300'])('SQLSTATE %s', (code) => {
    expect(storeUnavailable(withCode(code))).toEqual({ store: 'postgres', reason: `SQLSTATE ${code}` });
  });

  it.each(['23505', '40001', '40P01', '57014', '42P01', '22P02', '53200', '28P01'])('not SQLSTATE %s', (code) => {
    expect(storeUnavailable(withCode(code))).toBeUndefined();
  });

  it('an AggregateError of refused connects (a host name with several addresses)', () => {
    expect(isStoreUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect'))).toBe(true);
  });

  it('RabbitMQ gone under a request that publishes, not the broker refusing an operation', () => {
    const brokerDown = Object.assign(new Error('not connected to RabbitMQ at amqp://127.0.0.1:5672'), { name: 'BrokerUnavailableError', code: 'BROKER_UNAVAILABLE' });
    expect(storeUnavailable(brokerDown)).toEqual({ store: 'rabbitmq', reason: 'broker unavailable' });
    const closed = Object.assign(new Error('Channel closed'), { name: 'IllegalOperationError' });
    expect(storeUnavailable(closed)).toEqual({ store: 'rabbitmq', reason: 'Channel closed' });
    for (const message of ['channel closed', 'Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - broker forced connection closure with reason \'shutdown\'"', 'Channel ended, no reply will be forthcoming', 'Heartbeat timeout']) {
      expect(storeUnavailable(new Error(message))?.store).toBe('rabbitmq');
    }
    expect(storeUnavailable(new Error("Channel closed by server: 404 (NOT-FOUND) with message \"NOT_FOUND - no queue 'x'\""))).toBeUndefined();
  });
});
