import type http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { RequestHandler } from 'express';
import type { Pool } from 'pg';
import { checkPostgres, createDb, createPool } from '@sched/db';
import { sendData, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS, type FastStep } from '../src';
import { flushLogs, testApp } from './test-app';

/**
 * A store that is down answers 503 service_unavailable with Retry-After and the envelope (decisions.md
 * §2), through the router and through the fast path before express alike; it is logged at warn without
 * a stack. A bug is still a 500, logged at error with its stack. The errors are real node-postgres and
 * drizzle errors of a pool whose server does not listen.
 */

const quiet = { error: () => undefined };
let deadUrl: string;
let dead: Pool;
let server: http.Server;
let base: string;
let t: ReturnType<typeof testApp>;

/** A port where nothing listens: bound, then closed again. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  deadUrl = `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`;
  dead = createPool(deadUrl, { logger: quiet });
  const db = createDb(dead);
  const viaDrizzle: FastStep = async (_req, res) => sendData(res, 200, await db.execute('SELECT 1'));
  const viaPool: RequestHandler = async (_req, res) => sendData(res, 200, (await dead.query('SELECT 1')).rows);
  const inTransaction: RequestHandler = async (_req, res) => sendData(res, 200, await db.transaction(async (tx) => tx.execute('SELECT 1')));
  const bug: RequestHandler = async () => {
    await Promise.resolve();
    throw new TypeError("Cannot read properties of undefined (reading 'id')");
  };
  const brokerDown: RequestHandler = () => {
    throw Object.assign(new Error('not connected to RabbitMQ at amqp://guest:guest@10.0.0.9:5672'), { name: 'BrokerUnavailableError', code: 'BROKER_UNAVAILABLE' });
  };

  t = testApp({ readiness: { postgres: () => checkPostgres(dead), other: async () => undefined } });
  t.fastPath({ routes: [{ pattern: '/fast/drizzle', steps: [viaDrizzle] }] });
  t.route('GET', '/fast/drizzle', viaDrizzle);
  t.route('GET', '/v1/drizzle', viaDrizzle);
  t.route('POST', '/v1/pool', viaPool);
  t.route('DELETE', '/v1/transaction', inTransaction);
  t.route('GET', '/v1/bug', bug);
  t.route('POST', '/admin/v1/publish', brokerDown);
  server = await t.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t.close();
  await dead.end();
});

async function call(method: string, path: string): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${base}${path}`, { method });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text), text };
}

describe('a store that is down answers 503, not 500', () => {
  it.each([
    ['GET', '/v1/drizzle'],
    ['GET', '/fast/drizzle'],
    ['POST', '/v1/pool'],
    ['DELETE', '/v1/transaction'],
    ['POST', '/admin/v1/publish'],
  ])('%s %s: 503 service_unavailable with Retry-After and the envelope, no internals', async (method, path) => {
    const res = await call(method, path);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe(String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS));
    expect(res.body).toEqual({
      error: { code: 'service_unavailable', message: 'The service is temporarily unavailable; try again later.', details: [] },
      meta: { request_id: res.headers.get('x-request-id') },
    });
    expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|SELECT|RabbitMQ|stack/);
  });

  it('logs the outage at warn with its cause and no stack, and never as an unhandled error', async () => {
    const res = await call('GET', '/v1/drizzle');
    await flushLogs();
    const lines = t.lines.filter((l) => l.request_id === res.headers.get('x-request-id'));
    const warn = lines.find((l) => l.message === 'store unavailable; answered 503');
    expect(warn).toMatchObject({ level: 'warn', route: '/v1/drizzle', method: 'GET', reason: expect.stringContaining('ECONNREFUSED') });
    expect(JSON.stringify(warn)).not.toMatch(/stack|SELECT/);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    const broker = t.lines.find((l) => l.message === 'store unavailable; answered 503' && l.route === '/admin/v1/publish');
    expect(broker).toMatchObject({ level: 'warn', store: 'rabbitmq' });
  });

  it('a bug is still 500 internal_error, logged at error level with its stack', async () => {
    const res = await call('GET', '/v1/bug');
    expect(res.status).toBe(500);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(res.body.error.code).toBe('internal_error');
    await flushLogs();
    const logged = t.lines.find((l) => l.message === 'unhandled error' && l.request_id === res.headers.get('x-request-id'));
    expect(logged).toMatchObject({ level: 'error', route: '/v1/bug', err: { name: 'TypeError', stack: expect.stringMatching(/^TypeError: Cannot read properties.*\n\s+at /) } });
  });

  it('/readyz names the dependency that is down', async () => {
    const res = await call('GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.data).toEqual({ status: 'not_ready', checks: { postgres: 'failed', other: 'ok' }, failed: ['postgres'] });
    expect(res.text).not.toContain(deadUrl);
  });
});
