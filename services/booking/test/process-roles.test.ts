import { cleanupAmqpPrefix, createTestDatabase, credentialFor, expectProcessRolesSplit, testAmqp, type TestAmqp, type TestDatabase } from '@sched/testing';
import { startAvailabilityStub, type AvailabilityStub } from './support/availability-stub';
import { BOOKING_QUEUES, EXCHANGES, startBookingProcess } from './support/booking-harness';

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

const ROUTE = '/v1/bookings';

it('api answers the routes and starts no consumer, relay or retention job; worker starts them and serves no route', async () => {
  await expectProcessRolesSplit({
    start: (role) => startBookingProcess(db, amqp, stub.url, { PROCESS_ROLE: role }),
    amqpUrl: amqp.url,
    queue: `${amqp.prefix}booking`,
    apiStatus: async (url) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('booking', ROUTE, { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA' }) })).status,
    background: ['outbox relay', 'calendar result consumer', 'retention job'],
    apiOnly: ['availability client'],
    inBoth: ['http'],
    whileRunning: async (api, worker) => {
      expect(api.parts.consumer).toBeUndefined();
      await worker.parts.consumer!.ready();
    },
  });
}, 30000);
