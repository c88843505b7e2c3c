import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { serviceQueueNames } from '@sched/messaging';
import { runService, type RunningService } from '@sched/runtime';
import {
  cleanupAmqpPrefix,
  createTestDatabase,
  credentialFor,
  queueConsumerCount,
  stoppedClosers,
  testAmqp,
  TEST_INTERNAL_AUTH_KEYS,
  waitFor,
  type TestAmqp,
  type TestDatabase,
} from '@sched/testing';
import { setupCalendarSync } from '../src/app';
import { readConfig, type CalendarSyncConfig } from '../src/config';
import { CALENDAR_SYNC_ACCESS } from '../src/http/access';

/**
 * PROCESS_ROLE: calendar-sync as two processes on one database and broker, as `npm start` runs it. The API process answers the busy endpoint and the operator routes and starts no calendar-write consumer, relay, refresher or retention job; the worker starts those and serves no route. Both keep the connection and snapshot copies in step by LISTEN.
 */
let db: TestDatabase;
let amqp: TestAmqp;
beforeAll(async () => {
  db = await createTestDatabase({ services: ['calendar-sync'] });
  amqp = testAmqp();
});
afterAll(async () => {
  await db.drop();
  const q = serviceQueueNames(amqp.prefix, 'calendar-sync', [2000, 10000, 60000]);
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, [q.queue, q.dlq, ...q.retries.map((r) => r.queue)], ['scheduling.events', 'scheduling.dlx']);
});

async function startAs(role: 'api' | 'worker'): Promise<{ service: RunningService<CalendarSyncConfig>; url: string; logs: string[] }> {
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => logs.push(c.toString()));
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('calendar-sync'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    NODE_ENV: 'test',
    AVAILABILITY_URL: 'http://127.0.0.1:9',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    SHUTDOWN_TIMEOUT_MS: '3000',
    PROCESS_ROLE: role,
  });
  const service = await runService({
    name: 'calendar-sync',
    config,
    brokerCritical: true,
    access: CALENDAR_SYNC_ACCESS,
    handleSignals: false,
    logger: createLogger({ service: 'calendar-sync', stream, level: 'info' }),
    setup: (ctx) => setupCalendarSync(ctx),
  });
  return { service, url: `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`, logs };
}

const ROUTE = '/admin/v1/secrets/calendar-sync';
const get = async (url: string) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('calendar-sync', ROUTE) })).status;

const BACKGROUND = ['outbox relay', 'booking consumer', 'busy refresher', 'retention job'];

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  const api = await startAs('api');
  const worker = await startAs('worker');
  const queue = serviceQueueNames(amqp.prefix, 'calendar-sync', [2000, 10000, 60000]).queue;
  try {
    await api.service.broker.waitForConnection();
    // One consumer on the service's queue: the worker's.
    await waitFor(async () => (await queueConsumerCount(amqp.url, queue)) > 0, { timeoutMs: 15000 });
    expect(await queueConsumerCount(amqp.url, queue)).toBe(1);
    expect(await get(api.url)).toBe(200);
    expect(await get(worker.url)).toBe(404);
    for (const path of ['/healthz', '/readyz', '/metrics']) expect([path, (await fetch(`${worker.url}${path}`)).status]).toEqual([path, 200]);
  } finally {
    await api.service.stop('test done');
    await worker.service.stop('test done');
  }
  // What each process started is what it stopped.
  expect(stoppedClosers(api.logs).filter((c) => BACKGROUND.includes(c))).toEqual([]);
  expect(stoppedClosers(worker.logs)).toEqual(expect.arrayContaining(BACKGROUND));
  for (const both of [api.logs, worker.logs]) expect(stoppedClosers(both)).toContain('cache invalidation');
}, 30000);
