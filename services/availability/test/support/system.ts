import { AVAILABILITY_ACCESS } from '../../src/http/access';
import http from 'node:http';
import { PassThrough } from 'node:stream';
import { makeEvent, type Booking, type EventData } from '@sched/contracts';
import { createLogger } from '@sched/logger';
import { createBroker, type Broker, type Consumer } from '@sched/messaging';
import { runService, type RunningService } from '@sched/runtime';
import { captureLogs, cleanupAmqpPrefix, createTestDatabase, loopbackUrl, testAmqp, waitFor, type TestAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS } from '@sched/testing';
import { ADMIN_TOKEN, call, callsDirectly, startGateway, type RunningGateway } from '../../../gateway/test/support/gateway-harness';
import { setupAvailability, type AvailabilityParts, type SetupOptions } from '../../src/app';
import { parseAvailabilityConfig, type AvailabilityConfig } from '../../src/config';
import { startCalendarStub, type CalendarStub } from './calendar-stub';

export { ADMIN_TOKEN, call };
export const CURSOR_SECRET = 'test-cursor-secret-0123456789';
export const ALL_SCOPES = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'];
const RETRY_DELAYS_MS = [50, 100];

export interface System {
  db: TestDatabase;
  gateway: RunningGateway;
  service: RunningService<AvailabilityConfig>;
  /** Direct URL of the availability service (internal endpoints, header checks). */
  serviceUrl: string;
  consumer: Consumer;
  /** The service's log lines (debug level): its consumer's "event handled" lines say a message is done. */
  logs: string[];
  calendar: CalendarStub;
  publisher: Broker;
  /** Publishes an event on the test's own exchange, as another service's outbox relay would. */
  publish(event: ReturnType<typeof makeEvent>): Promise<void>;
  close(): Promise<void>;
}

const quiet = () => createLogger({ service: 'availability-test', stream: new PassThrough(), level: 'error' });

export interface AvailabilityProcess {
  service: RunningService<AvailabilityConfig>;
  /** What setupAvailability started: no consumer in an `api` process (PROCESS_ROLE). */
  parts: AvailabilityParts;
  url: string;
  /** The service's log output (debug level). */
  logs: string[];
}

/** One availability process through runService on port 0, on the given database and AMQP prefix; `env` adds to its config (PROCESS_ROLE picks its part). */
export async function startAvailabilityProcess(db: TestDatabase, amqp: TestAmqp, env: Record<string, string>, setup: SetupOptions = {}): Promise<AvailabilityProcess> {
  const config = parseAvailabilityConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('availability'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    CURSOR_SECRET,
    LOG_LEVEL: 'error',
    ...env,
  });
  const { stream, logs } = captureLogs();
  let parts: AvailabilityParts = {};
  const service = await runService({
    name: 'availability',
    config,
    access: AVAILABILITY_ACCESS,
    brokerCritical: false,
    handleSignals: false,
    logger: createLogger({ service: 'availability', stream, level: 'debug' }),
    setup: (ctx) => {
      parts = setupAvailability(ctx, setup);
    },
  });
  return { service, parts, url: loopbackUrl(service.server), logs };
}

/**
 * The real thing in-process: a fresh database with the gateway's and availability's migrations, a
 * unique AMQP prefix, calendar-sync as a real HTTP stub, availability through runService on port 0
 * and the gateway (runService + setupGateway) in front of it. The Slots cache is off unless `slotsCacheTtlMs` is given.
 */
export async function startSystem(opts: { now?: () => Date; busyTimeoutMs?: number; slotsCacheTtlMs?: number } = {}): Promise<System> {
  const db = await createTestDatabase({ services: ['gateway', 'availability'] });
  const amqp = testAmqp();
  const calendar = await startCalendarStub();
  const { service, parts, url: serviceUrl, logs } = await startAvailabilityProcess(
    db,
    amqp,
    {
      CALENDAR_SYNC_URL: calendar.url,
      BUSY_TIMEOUT_MS: String(opts.busyTimeoutMs ?? 400),
      // Off unless a test is about the cache: most tests change the calendar stub between two identical
      // queries, a change the cache would only see after its TTL (tests/slots-cache.test.ts covers it).
      SLOTS_CACHE_TTL_MS: String(opts.slotsCacheTtlMs ?? 0),
    },
    { now: opts.now, retryDelaysMs: RETRY_DELAYS_MS },
  );
  const { consumer } = parts;
  if (!consumer) throw new Error(`availability started without its consumer (PROCESS_ROLE ${service.config.PROCESS_ROLE})`);
  await consumer.ready(15_000);
  // Tests that call availability directly send the credential its real caller would (gateway-harness call).
  callsDirectly(serviceUrl, 'availability');
  const gateway = await startGateway(db, serviceUrl);
  const publisher = createBroker({ url: amqp.url, prefix: amqp.prefix, name: 'availability-test-publisher', logger: quiet() });
  await publisher.waitForConnection();
  const queues = consumer.queues;
  return {
    db,
    gateway,
    service,
    serviceUrl,
    consumer,
    logs,
    calendar,
    publisher,
    publish: (event) => publisher.publish(event),
    close: async () => {
      await gateway.close();
      await service.stop();
      await publisher.close();
      await calendar.close();
      await cleanupAmqpPrefix(amqp.url, amqp.prefix, [queues.queue, queues.dlq, ...queues.retries.map((r) => r.queue)], ['scheduling.events', 'scheduling.dlx']);
      await db.drop();
    },
  };
}

/** Admin and v1 calls of one workspace through the gateway. */
export class Tenant {
  private constructor(
    readonly sys: System,
    readonly ws: string,
    readonly key: string,
  ) {}

  static async create(sys: System, scopes = ALL_SCOPES): Promise<Tenant> {
    const ws = await call(sys.gateway.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Acme' } });
    if (ws.status !== 201) throw new Error(`workspace: ${ws.status}`);
    const key = await call(sys.gateway.url, 'POST', `/admin/v1/workspaces/${ws.body.data.id}/api-keys`, {
      token: ADMIN_TOKEN,
      json: { name: 'test', scopes, rate_limit: { limit: 100000, window_seconds: 1 } },
    });
    if (key.status !== 201) throw new Error(`api key: ${key.status}`);
    return new Tenant(sys, ws.body.data.id, key.body.data.key);
  }

  admin(method: string, path: string, json?: unknown) {
    return call(this.sys.gateway.url, method, `/admin/v1/workspaces/${this.ws}${path}`, { token: ADMIN_TOKEN, json });
  }

  v1(method: string, path: string, opts: { json?: unknown; headers?: Record<string, string> } = {}) {
    return request(this.sys.gateway.url, method, path, { headers: { authorization: `Bearer ${this.key}`, ...opts.headers }, json: opts.json });
  }

  async host(body: Record<string, unknown> = {}): Promise<string> {
    const res = await this.admin('POST', '/hosts', { name: 'Ada', email: 'ada@example.com', timezone: 'Europe/Berlin', ...body });
    if (res.status !== 201) throw new Error(`host: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id;
  }

  async schedule(hostId: string, body: Record<string, unknown>): Promise<void> {
    const res = await this.admin('PUT', `/hosts/${hostId}/schedule`, body);
    if (res.status !== 200) throw new Error(`schedule: ${res.status} ${JSON.stringify(res.body)}`);
  }

  async eventType(hostId: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await this.admin('POST', '/event-types', { host_id: hostId, name: 'Intro', slug: `intro-${Math.random().toString(36).slice(2, 10)}`, duration_minutes: 30, meeting_type: 'video', ...body });
    if (res.status !== 201) throw new Error(`event type: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id;
  }

  /** calendar-sync's event for a host, then waits until the Event Type shows the expected reason. */
  async calendarStatus(hostId: string, status: 'connected' | 'error' | 'disconnected', eventTypeId: string, expectedReason?: string | null): Promise<void> {
    await this.sys.publish(
      makeEvent('calendar.connection_updated', { workspaceId: this.ws, data: { host_id: hostId, status, error_code: status === 'error' ? 'auth_failed' : null } }),
    );
    const reason = expectedReason !== undefined ? expectedReason : status === 'connected' ? null : status === 'error' ? 'calendar_error' : 'calendar_not_connected';
    await waitFor(async () => ((await this.v1('GET', `/v1/event-types/${eventTypeId}`)).body.data?.unavailable_reason === reason ? true : null));
  }

  /** A bookable Event Type: host (Berlin by default), schedule, connected calendar. */
  async bookable(opts: { timezone?: string; weekly?: Record<string, unknown>; overrides?: unknown[]; eventType?: Record<string, unknown> } = {}) {
    const hostId = await this.host({ timezone: opts.timezone ?? 'Europe/Berlin' });
    await this.schedule(hostId, { weekly: opts.weekly ?? { mon: [{ start: '09:00', end: '17:00' }], tue: [{ start: '09:00', end: '17:00' }] }, overrides: opts.overrides ?? [] });
    const eventTypeId = await this.eventType(hostId, opts.eventType);
    await this.calendarStatus(hostId, 'connected', eventTypeId);
    return { hostId, eventTypeId };
  }
}

export function bookingEvent(
  type: 'booking.created' | 'booking.rescheduled' | 'booking.cancelled',
  workspaceId: string,
  b: Booking,
  internal?: EventData<'booking.created'>['internal'],
) {
  return makeEvent(type, { workspaceId, data: internal === undefined ? { booking: b } : { booking: b, internal } });
}

/** Like the gateway harness's call, but over node:http so a GET can carry a JSON body (api-v1.md allows one). */
export function request(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json);
  const headers: Record<string, string> = { ...opts.headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* keep text */
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
