import { DEFAULT_RETRY_DELAYS_MS, serviceQueueNames } from '@sched/messaging';
import { cleanupAmqpPrefix, createTestDatabase, credentialFor, expectProcessRolesSplit, testAmqp, type TestAmqp, type TestDatabase } from '@sched/testing';
import { startAvailabilityProcess } from './support/system';

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

const ROUTE = '/v1/event-types';

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  await expectProcessRolesSplit({
    start: (role) =>
      startAvailabilityProcess(db, amqp, {
        PROCESS_ROLE: role,
        CALENDAR_SYNC_URL: 'http://127.0.0.1:9',
        LOG_LEVEL: 'info',
        SHUTDOWN_TIMEOUT_MS: '3000',
      }),
    amqpUrl: amqp.url,
    queue: serviceQueueNames(amqp.prefix, 'availability', DEFAULT_RETRY_DELAYS_MS).queue,
    apiStatus: async (url) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('availability', ROUTE, { workspaceId: 'wsp_AAAAAAAAAAAAAAAAAAAAAA' }) })).status,
    background: ['availability consumer', 'retention job'],
    apiOnly: ['calendar-sync client', 'slots cache invalidation'],
  });
}, 30000);
