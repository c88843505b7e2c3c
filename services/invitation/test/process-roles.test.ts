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
import { setupInvitation } from '../src/app';
import { readConfig, type InvitationConfig } from '../src/config';
import { INVITATION_ACCESS } from '../src/http/access';

/**
 * PROCESS_ROLE: invitation as two processes on one database and broker, as `npm start` runs it. The API process answers the routes and the booking page and starts no consumer or retention job; the worker starts those and serves no route.
 */
let db: TestDatabase;
let amqp: TestAmqp;
beforeAll(async () => {
  db = await createTestDatabase({ services: ['invitation'] });
  amqp = testAmqp();
});
afterAll(async () => {
  await db.drop();
  const q = serviceQueueNames(amqp.prefix, 'invitation', DEFAULT_RETRY_DELAYS_MS);
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, [q.queue, q.dlq, ...q.retries.map((r) => r.queue)], ['scheduling.events', 'scheduling.dlx']);
});

async function startAs(role: 'api' | 'worker'): Promise<{ service: RunningService<InvitationConfig>; url: string; logs: string[] }> {
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => logs.push(c.toString()));
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('invitation'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    CURSOR_SECRET: randomBytes(24).toString('base64url'),
    SHUTDOWN_TIMEOUT_MS: '3000',
    PROCESS_ROLE: role,
  });
  const service = await runService({
    name: 'invitation',
    config,
    brokerCritical: false,
    access: INVITATION_ACCESS,
    handleSignals: false,
    logger: createLogger({ service: 'invitation', stream, level: 'info' }),
    setup: (ctx) => setupInvitation(ctx),
  });
  return { service, url: `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`, logs };
}

const ROUTE = '/admin/v1/secrets/invitation';
const get = async (url: string) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('invitation', ROUTE) })).status;

const BACKGROUND = ['invitation consumer', 'retention job'];

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  const api = await startAs('api');
  const worker = await startAs('worker');
  const queue = serviceQueueNames(amqp.prefix, 'invitation', DEFAULT_RETRY_DELAYS_MS).queue;
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
  expect(stoppedClosers(api.logs)).toEqual(expect.arrayContaining(['availability client', 'booking client']));
  expect(stoppedClosers(worker.logs).filter((c) => ['availability client', 'booking client'].includes(c))).toEqual([]);
}, 30000);
