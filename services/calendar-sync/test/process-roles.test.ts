import { createTestDatabase, credentialFor, expectProcessRolesSplit, testAmqp, type TestAmqp, type TestDatabase } from '@sched/testing';
import { cleanupBroker, startCalendarSyncProcess } from './support/harness';

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
  // The harness's CALENDAR_WRITE_RETRY_DELAYS_MS.
  await cleanupBroker(amqp, [200, 400]);
});

const ROUTE = '/admin/v1/secrets/calendar-sync';

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  await expectProcessRolesSplit({
    start: (role) => startCalendarSyncProcess({ db, amqp, availabilityUrl: 'http://127.0.0.1:9', env: { PROCESS_ROLE: role, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: '3000' } }),
    amqpUrl: amqp.url,
    queue: `${amqp.prefix}calendar-sync`,
    apiStatus: async (url) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('calendar-sync', ROUTE) })).status,
    background: ['outbox relay', 'booking consumer', 'busy refresher', 'retention job'],
    inBoth: ['cache invalidation'],
  });
}, 30000);
