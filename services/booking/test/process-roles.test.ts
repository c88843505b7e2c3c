import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createLogger } from '@sched/logger';
import { runService, type RunningService } from '@sched/runtime';
import {
  cleanupAmqpPrefix,
  createTestDatabase,
  credentialFor,
  queueConsumerCount,
  stoppedClosers,
  testAmqp,
  TEST_INTERNAL_AUTH_KEYS,
  type TestAmqp,
  type TestDatabase,
} from '@sched/testing';
import { setupBooking, type BookingParts } from '../src/app';
import { readConfig, type BookingConfig } from '../src/config';
import { BOOKING_ACCESS } from '../src/http/access';
import { startAvailabilityStub, type AvailabilityStub } from './support/availability-stub';
import { BOOKING_QUEUES, CURSOR_SECRET, EXCHANGES } from './support/booking-harness';

/**
 * PROCESS_ROLE: booking as two processes on one database and broker, as `npm start` runs it. The API
 * process answers the routes and starts no relay, consumer or retention job; the worker starts those and
 * serves no route.
 */
let db: TestDatabase;
let amqp: TestAmqp;
let stub: AvailabilityStub;
beforeAll(async () => {
  db = await createTestDatabase({ services: ['booking'] });
  amqp = testAmqp();
  stub = await startAvailabilityStub();
});
afterAll(async () => {
  await stub.close();
  await db.drop();
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, BOOKING_QUEUES, EXCHANGES);
});

async function startAs(role: 'api' | 'worker'): Promise<{ service: RunningService<BookingConfig>; parts: BookingParts; url: string; logs: string[] }> {
  const logs: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => logs.push(c.toString()));
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('booking'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    AVAILABILITY_URL: stub.url,
    CURSOR_SECRET,
    SHUTDOWN_TIMEOUT_MS: '3000',
    PROCESS_ROLE: role,
  });
  let parts: BookingParts = {};
  const service = await runService({
    name: 'booking',
    config,
    brokerCritical: false,
    access: BOOKING_ACCESS,
    handleSignals: false,
    logger: createLogger({ service: 'booking', stream, level: 'info' }),
    setup: (ctx) => {
      parts = setupBooking(ctx);
    },
  });
  return { service, parts, url: `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`, logs };
}

const list = async (url: string) => (await fetch(`${url}/v1/bookings`, { headers: await credentialFor('booking', '/v1/bookings', { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA' }) })).status;

const BACKGROUND = ['outbox relay', 'calendar result consumer', 'retention job'];

it('api answers the routes and starts no consumer, relay or retention job; worker starts them and serves no route', async () => {
  const api = await startAs('api');
  const worker = await startAs('worker');
  try {
    expect(api.parts.consumer).toBeUndefined();
    await worker.parts.consumer!.ready();
    await api.service.broker.waitForConnection();
    // One consumer on the queue: the worker's.
    expect(await queueConsumerCount(amqp.url, `${amqp.prefix}booking`)).toBe(1);
    expect(await list(api.url)).toBe(200);
    expect(await list(worker.url)).toBe(404);
    for (const path of ['/healthz', '/readyz', '/metrics']) expect([path, (await fetch(`${worker.url}${path}`)).status]).toEqual([path, 200]);
  } finally {
    await api.service.stop('test done');
    await worker.service.stop('test done');
  }
  // What each process started is what it stopped.
  expect(stoppedClosers(api.logs)).toEqual(expect.arrayContaining(['availability client', 'http']));
  expect(stoppedClosers(api.logs).filter((c) => BACKGROUND.includes(c))).toEqual([]);
  expect(stoppedClosers(worker.logs)).toEqual(expect.arrayContaining(BACKGROUND));
  expect(stoppedClosers(worker.logs)).not.toContain('availability client');
}, 30000);
