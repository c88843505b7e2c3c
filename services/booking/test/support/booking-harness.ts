import { createLogger } from '@sched/logger';
import { runService, type RunningService } from '@sched/runtime';
import { captureLogs, cleanupAmqpPrefix, createTestDatabase, loopbackUrl, testAmqp, type TestAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { setupBooking, type BookingParts } from '../../src/app';
import { readConfig, type BookingConfig } from '../../src/config';
import { BOOKING_ACCESS } from '../../src/http/access';
import { ADMIN_TOKEN, call, startGateway, type RunningGateway } from '../../../gateway/test/support/gateway-harness';
import { startAvailabilityStub, type AvailabilityStub, type StubBehaviour } from './availability-stub';

export const CURSOR_SECRET = 'booking-test-cursor-secret-0123456789';
const ALL_SCOPES = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'];

export interface ApiKeyOfWorkspace {
  workspaceId: string;
  key: string;
  keyId: string;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface RunningBookingService extends RunningService<BookingConfig> {
  /** Resolves once the calendar result consumer is subscribed (tests publish only after that). */
  consumerReady(timeoutMs?: number): Promise<void>;
}

export interface BookingHarness {
  db: TestDatabase;
  amqp: TestAmqp;
  stub: AvailabilityStub;
  service: RunningBookingService;
  gateway: RunningGateway;
  /** The booking service itself (behind the gateway). */
  bookingUrl: string;
  /** A workspace with a key holding every scope and a high rate limit. */
  main: ApiKeyOfWorkspace;
  serviceLogs: string[];
  newWorkspace(scopes?: string[]): Promise<ApiKeyOfWorkspace>;
  /** Calls the public API through the gateway with `main`'s key unless another is given. */
  api(method: string, path: string, opts?: { json?: unknown; body?: string; headers?: Record<string, string>; as?: ApiKeyOfWorkspace }): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** Names the service and tests make under the prefix, for cleanup. */
export const BOOKING_QUEUES = ['booking', 'booking.dlq', 'booking.retry.1000ms', 'booking.retry.5000ms', 'booking.retry.30000ms'];
export const EXCHANGES = ['scheduling.events', 'scheduling.dlx'];

export interface BookingProcess {
  service: RunningService<BookingConfig>;
  /** What setupBooking started: no consumer in an `api` process. */
  parts: BookingParts;
  url: string;
  /** The service's log output (info level). */
  logs: string[];
}

/** One booking process as main.ts runs it, on the given database and AMQP prefix; `env.PROCESS_ROLE` picks its part. */
export async function startBookingProcess(db: TestDatabase, amqp: TestAmqp, availabilityUrl: string, env: Record<string, string> = {}): Promise<BookingProcess> {
  const { stream, logs } = captureLogs();
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('booking'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    AVAILABILITY_URL: availabilityUrl,
    CURSOR_SECRET,
    SLOT_CHECK_TIMEOUT_MS: '500',
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '3000',
    ...env,
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
  return { service, parts, url: loopbackUrl(service.server), logs };
}

/**
 * The booking service as main.ts runs it (runService, outbox relay, consumer, cleanup) on a fresh test
 * database and AMQP prefix, behind an in-process gateway, with a real HTTP stub for availability.
 */
export async function startBookingHarness(opts: { env?: Record<string, string>; stub?: StubBehaviour; extraQueues?: string[] } = {}): Promise<BookingHarness> {
  const db = await createTestDatabase({ services: ['gateway', 'booking'] });
  const amqp = testAmqp();
  const stub = await startAvailabilityStub(opts.stub);
  const { service: running, parts, url: bookingUrl, logs: serviceLogs } = await startBookingProcess(db, amqp, stub.url, opts.env);
  const service: RunningBookingService = { ...running, consumerReady: (timeoutMs) => parts.consumer!.ready(timeoutMs) };
  const gateway = await startGateway(db, bookingUrl, { AVAILABILITY_URL: stub.url, UPSTREAM_TIMEOUT_MS: '15000' });

  const newWorkspace = async (scopes = ALL_SCOPES): Promise<ApiKeyOfWorkspace> => {
    const ws = await call(gateway.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Booking tests' } });
    if (ws.status !== 201) throw new Error(`workspace: ${ws.status}`);
    const key = await call(gateway.url, 'POST', `/admin/v1/workspaces/${ws.body.data.id}/api-keys`, {
      token: ADMIN_TOKEN,
      json: { name: 'tests', scopes, rate_limit: { limit: 100000, window_seconds: 1 } },
    });
    if (key.status !== 201) throw new Error(`api key: ${key.status}`);
    return { workspaceId: ws.body.data.id, key: key.body.data.key, keyId: key.body.data.id };
  };
  const main = await newWorkspace();

  return {
    db,
    amqp,
    stub,
    service,
    gateway,
    bookingUrl,
    main,
    serviceLogs,
    newWorkspace,
    api: (method, path, o = {}) => call(gateway.url, method, path, { token: (o.as ?? main).key, json: o.json, body: o.body, headers: o.headers }),
    async close() {
      await gateway.close();
      await service.stop('test done');
      await stub.close();
      await db.drop();
      await cleanupAmqpPrefix(amqp.url, amqp.prefix, [...BOOKING_QUEUES, ...(opts.extraQueues ?? [])], EXCHANGES).catch(() => undefined);
    },
  };
}

let slotCounter = 0;
/** A fresh future start on the hour (2031 onwards), so bookings of one test never meet another's by accident. */
export function nextStart(): string {
  slotCounter += 1;
  return new Date(Date.UTC(2031, 0, 1, 0, 0, 0) + slotCounter * 3_600_000).toISOString();
}

export function createBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: nextStart(),
    guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
    ...over,
  };
}
