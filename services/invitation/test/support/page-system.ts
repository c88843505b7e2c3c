import { INVITATION_ACCESS } from '../../src/http/access';
import { randomBytes } from 'node:crypto';
import { createLogger } from '@sched/logger';
import { serviceQueueNames } from '@sched/messaging';
import { runService, type RunningService } from '@sched/runtime';
import { cleanupAmqpPrefix, createTestDatabase, freePort, testAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, type RunningGateway } from '../../../gateway/test/support/gateway-harness';
import { setupInvitation } from '../../src/app';
import { readConfig, type InvitationConfig } from '../../src/config';
import { startAvailabilityStub, startBookingStub } from './stubs';

export { call };

export const ALL_SCOPES = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'];
const RETRY_DELAYS_MS = [200];

/** A settable clock: null means the real time. */
export interface TestClock {
  now: Date | null;
}

export interface PageSystem {
  db: TestDatabase;
  gateway: RunningGateway;
  invitation: RunningService<InvitationConfig>;
  availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
  booking: Awaited<ReturnType<typeof startBookingStub>>;
  clock: TestClock;
  /** Logs of the invitation service, one JSON line per entry. */
  serviceLogs: string[];
  /** A new workspace and a key with every scope. */
  workspace(name?: string): Promise<{ id: string; slug: string; key: string }>;
  stop(): Promise<void>;
}

/**
 * The invitation service in-process (runService, real Postgres and RabbitMQ) behind an in-process
 * gateway, with availability and booking as real HTTP stub servers.
 */
export async function startPageSystem(opts: { gatewayEnv?: Record<string, string>; invitationEnv?: Record<string, string>; bookingDelayMs?: number } = {}): Promise<PageSystem> {
  const db = await createTestDatabase({ services: ['gateway', 'invitation'] });
  const amqp = testAmqp();
  const availability = await startAvailabilityStub();
  const booking = await startBookingStub({ delayMs: opts.bookingDelayMs });
  const invitationPort = await freePort();
  const gateway = await startGateway(db, availability.url, {
    INVITATION_URL: `http://127.0.0.1:${invitationPort}`,
    BOOKING_URL: booking.url,
    AVAILABILITY_URL: availability.url,
    UPSTREAM_TIMEOUT_MS: '5000',
    ...opts.gatewayEnv,
  });
  const clock: TestClock = { now: null };
  const serviceLogs: string[] = [];
  const { PassThrough } = await import('node:stream');
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => serviceLogs.push(c.toString()));
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: String(invitationPort),
    DATABASE_URL: db.urlFor('invitation'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    AVAILABILITY_URL: availability.url,
    BOOKING_URL: booking.url,
    BOOKING_PAGE_URL: `${gateway.url}/book`,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    CURSOR_SECRET: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'debug',
    ...opts.invitationEnv,
  });
  const invitation = await runService({
    name: 'invitation',
    config,
    access: INVITATION_ACCESS,
    brokerCritical: false,
    handleSignals: false,
    logger: createLogger({ service: 'invitation', level: 'debug', stream }),
    setup: (ctx) => setupInvitation(ctx, { now: () => clock.now ?? new Date(), retryDelaysMs: RETRY_DELAYS_MS }),
  });

  return {
    db,
    gateway,
    invitation,
    availability,
    booking,
    clock,
    serviceLogs,
    async workspace(name = 'Acme') {
      const ws = await call(gateway.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name } });
      if (ws.status !== 201) throw new Error(`workspace: ${ws.status}`);
      const key = await call(gateway.url, 'POST', `/admin/v1/workspaces/${ws.body.data.id}/api-keys`, { token: ADMIN_TOKEN, json: { name: 'k', scopes: ALL_SCOPES } });
      if (key.status !== 201) throw new Error(`api key: ${key.status}`);
      return { id: ws.body.data.id, slug: ws.body.data.slug, key: key.body.data.key };
    },
    async stop() {
      await invitation.stop();
      await gateway.close();
      await availability.close();
      await booking.close();
      await db.drop();
      const q = serviceQueueNames(amqp.prefix, 'invitation', RETRY_DELAYS_MS);
      await cleanupAmqpPrefix(amqp.url, amqp.prefix, [q.queue, q.dlq, ...q.retries.map((r) => r.queue)], ['scheduling.events', 'scheduling.dlx']);
    },
  };
}
