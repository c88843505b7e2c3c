import { serviceQueueNames } from '@sched/messaging';
import { createTestDatabase, credentialFor, expectProcessRolesSplit, testAmqp, type TestAmqp, type TestDatabase } from '@sched/testing';
import { cleanupBroker, startDispatchProcess } from './support/dispatch-harness';

/**
 * PROCESS_ROLE: webhook-dispatch as two processes on one database and broker, as `npm start` runs it. The API process answers the admin routes and starts no consumer, delivery worker or retention job; the worker starts those and serves no route.
 */
let db: TestDatabase;
let amqp: TestAmqp;
beforeAll(async () => {
  db = await createTestDatabase({ services: ['webhook-dispatch'] });
  amqp = testAmqp();
});
afterAll(async () => {
  await db.drop();
  await cleanupBroker(amqp);
});

const ROUTE = '/admin/v1/secrets/webhook-dispatch';

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  await expectProcessRolesSplit({
    start: (role) => startDispatchProcess(db, amqp, { PROCESS_ROLE: role, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '3000' }),
    amqpUrl: amqp.url,
    queue: serviceQueueNames(amqp.prefix, 'webhook-dispatch', []).queue,
    apiStatus: async (url) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('webhook-dispatch', ROUTE) })).status,
    background: ['event consumer', 'dead-letter publisher', 'webhook sender', 'delivery worker pool', 'delivery worker', 'retention job'],
  });
}, 30000);
