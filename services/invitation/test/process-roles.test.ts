import { randomBytes } from 'node:crypto';
import { createLogger } from '@sched/logger';
import { DEFAULT_RETRY_DELAYS_MS, serviceQueueNames } from '@sched/messaging';
import { runService } from '@sched/runtime';
import {
  captureLogs,
  cleanupAmqpPrefix,
  createTestDatabase,
  credentialFor,
  expectProcessRolesSplit,
  loopbackUrl,
  testAmqp,
  TEST_INTERNAL_AUTH_KEYS,
  type SplitRole,
  type TestAmqp,
  type TestDatabase,
} from '@sched/testing';
import { setupInvitation } from '../src/app';
import { readConfig } from '../src/config';
import { INVITATION_ACCESS } from '../src/http/access';

/**
 * PROCESS_ROLE: invitation as two processes on one database and broker, as `npm start` runs it. The API process answers the routes and the booking page and starts no consumer or retention job; the worker starts those and serves no route.
 */
let db: TestDatabase;
let amqp: TestAmqp;
const queues = () => serviceQueueNames(amqp.prefix, 'invitation', DEFAULT_RETRY_DELAYS_MS);
beforeAll(async () => {
  db = await createTestDatabase({ services: ['invitation'] });
  amqp = testAmqp();
});
afterAll(async () => {
  await db.drop();
  const q = queues();
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, [q.queue, q.dlq, ...q.retries.map((r) => r.queue)], ['scheduling.events', 'scheduling.dlx']);
});

async function startAs(role: SplitRole) {
  const { stream, logs } = captureLogs();
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
  return { service, url: loopbackUrl(service.server), logs };
}

const ROUTE = '/admin/v1/secrets/invitation';

it('api answers the routes and starts no consumer or background job; worker starts them and serves no route', async () => {
  await expectProcessRolesSplit({
    start: startAs,
    amqpUrl: amqp.url,
    queue: queues().queue,
    apiStatus: async (url) => (await fetch(`${url}${ROUTE}`, { headers: await credentialFor('invitation', ROUTE) })).status,
    background: ['invitation consumer', 'retention job'],
    apiOnly: ['availability client', 'booking client'],
  });
}, 30000);
