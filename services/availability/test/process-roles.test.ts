import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { DEFAULT_RETRY_DELAYS_MS, serviceQueueNames } from '@sched/messaging';
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
import { setupAvailability } from '../src/app';
import { parseAvailabilityConfig, type AvailabilityConfig } from '../src/config';
import { AVAILABILITY_ACCESS } from '../src/http/access';

/**
 * PROCESS_ROLE: availability as two processes on one database and broker, as `npm start` runs it. The API process answers the routes (with the Slots cache and its LISTEN) and starts no consumer or retention job; the worker starts those and serves no route.
 */
let db: TestDatabase;
let amqp: TestAmqp;
beforeAll(async () => {
  db = await createTestDatabase({ services: ['availability'] });
  amqp = testAmqp();
});
afterAll(async () => {
  await db.drop();
  const q = serviceQueueNames(amqp.prefix, 'availability', DEFAULT_RETRY_DELAYS_MS);
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, [q.queue, q.dlq, ...q.retries.map((r) => r.queue)], ['scheduling.events', 'scheduling.dlx']);
});

async function startAs(role: 'api' | 'worker'): Promise<{ service: RunningService<AvailabilityConfig>; url: string; logs: string[] }> {
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => logs.push(c.toString()));
  const config = parseAvailabilityConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('availability'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    CALENDAR_SYNC_URL: 'http://127.0.0.1:9',
    CURSOR_SECRET: randomBytes(24).toString('base64url'),
    SHUTDOWN_TIMEOUT_MS: '3000',
    PROCESS_ROLE: role,
  });
  const service = await runService({
    name: 'availability',
    config,
    brokerCritical: false,
    access: AVAILABILITY_ACCESS,
    handleSignals: false,
    logger: createLogger({ service: 'availability', stream, level: 'info' }),
    setup: (ctx) => setupAvailability(ctx),
  });
  return { service, url: `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`, logs };
}

const ROUTE = '/v1/event-types';
const get = async (url: string) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('availability', ROUTE, { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA' }) })).status;

const BACKGROUND = ['availability consumer', 'retention job'];

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  const api = await startAs('api');
  const worker = await startAs('worker');
  const queue = serviceQueueNames(amqp.prefix, 'availability', DEFAULT_RETRY_DELAYS_MS).queue;
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
  expect(stoppedClosers(api.logs)).toEqual(expect.arrayContaining(['calendar-sync client', 'slots cache invalidation']));
  expect(stoppedClosers(worker.logs).filter((c) => ['calendar-sync client', 'slots cache invalidation'].includes(c))).toEqual([]);
}, 30000);
