import { CALENDAR_SYNC_ACCESS } from '../../src/http/access';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import {
  makeEvent,
  newId,
  toTimestamp,
  type Booking,
  type EventKind,
  type InternalHost,
  MS_PER_DAY,
} from '@sched/contracts';
import { createDb } from '@sched/db';
import { createLogger } from '@sched/logger';
import { createBroker, type Broker } from '@sched/messaging';
import { runService, type RunningService } from '@sched/runtime';
import { captureLogs, cleanupAmqpPrefix, loopbackUrl, type TestAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS, credentialFor, waitFor } from '@sched/testing';
import { setupCalendarSync, type CalendarSyncParts, type SetupOptions } from '../../src/app';
import { readConfig, type CalendarSyncConfig } from '../../src/config';
import type { ProviderName } from '../../src/domain/calendar-provider';
import { connectionUpdatedEvent, passwordAad } from '../../src/domain/connection-status';
import { createStore } from '../../src/store/create-store';

export const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
export const TEMPLATE = 'https://meet.example.com/{booking_id}';

/** Start of the UTC day `days` from today, plus `hours`: tests place events relative to now (snapshots cache now−1 day…+90 days). */
export function at(days: number, hours = 0, minutes = 0): Date {
  const today = Math.floor(Date.now() / MS_PER_DAY) * MS_PER_DAY;
  return new Date(today + days * MS_PER_DAY + hours * 3_600_000 + minutes * 60_000);
}

// Calendar objects for Radicale: shared with the whole-system benchmarks (tests-e2e/bench), so they live in @sched/testing.
export { icalTime, icalDate, vcalendar, vevent } from '@sched/testing';

/** availability's internal host API, as a real HTTP server: hosts are added per test. */
export async function startAvailabilityStub(): Promise<{
  url: string;
  hosts: Map<string, InternalHost & { workspaceId: string }>;
  requests: string[];
  addHost(workspaceId: string, host?: Partial<InternalHost>): InternalHost;
  close(): Promise<void>;
}> {
  const hosts = new Map<string, InternalHost & { workspaceId: string }>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const m = /^\/internal\/v1\/workspaces\/([^/]+)\/hosts\/([^/?]+)$/.exec(req.url ?? '');
    const host = m ? hosts.get(m[2]!) : undefined;
    res.setHeader('content-type', 'application/json');
    if (!host || host.workspaceId !== m![1]) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'The resource was not found.', details: [] }, meta: { request_id: 'req_x' } }));
      return;
    }
    const { workspaceId: _ws, ...data } = host;
    res.end(JSON.stringify({ data, meta: { request_id: 'req_x' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hosts,
    requests,
    addHost(workspaceId, host = {}) {
      const h: InternalHost = {
        id: newId('hst'),
        name: 'Hana Host',
        email: 'hana@example.com',
        timezone: 'Europe/Paris',
        conferencing_url_template: TEMPLATE,
        ...host,
      };
      hosts.set(h.id, { ...h, workspaceId });
      return h;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * A host (added to the availability stub) whose Google or Microsoft calendar is connected as the OAuth
 * connect flow saves it: the refresh token sealed as the password. Resolves with the host id.
 */
export async function saveOAuthConnection(o: {
  db: TestDatabase;
  availability: { addHost(workspaceId: string, host?: Partial<InternalHost>): InternalHost };
  sealer: { seal(plaintext: string, associatedData?: string): string };
  workspaceId: string;
  provider: ProviderName;
  refreshToken: string;
  calendarUrl: string;
  url: string;
  host?: Partial<InternalHost>;
}): Promise<string> {
  const host = o.availability.addHost(o.workspaceId, { timezone: 'UTC', ...o.host });
  await createStore(createDb(o.db.pool('calendar-sync'))).saveConnection(
    {
      id: newId('cal'),
      workspaceId: o.workspaceId,
      hostId: host.id,
      provider: o.provider,
      url: o.url,
      username: 'host@example.com',
      passwordSealed: o.sealer.seal(o.refreshToken, passwordAad(o.workspaceId, host.id)),
      calendarUrl: o.calendarUrl,
      hostTimezone: 'UTC',
      conferencingUrlTemplate: host.conferencing_url_template,
    },
    connectionUpdatedEvent({ workspaceId: o.workspaceId, hostId: host.id }, 'connected', null),
  );
  return host.id;
}

/** Per cache: the ids it has been told to drop (by a NOTIFY or its own writes), once changesHeard watches it. */
const heardBy = new WeakMap<object, Set<string>>();
let markers = 0;

/**
 * Sends a marker NOTIFY on the cache's channel and waits until `svc` has handled that very marker:
 * every change committed before it has been heard, so no copy of a changed row is served any more.
 * (A test that changes rows by hand must wait for this before it reads: invalidation is by NOTIFY.)
 */
export async function changesHeard(svc: RunningCalendarSync, db: TestDatabase): Promise<void> {
  const cache = svc.parts.cache;
  let heard = heardBy.get(cache);
  if (!heard) {
    const seen = new Set<string>();
    heard = seen;
    heardBy.set(cache, seen);
    const invalidate = cache.invalidate.bind(cache);
    cache.invalidate = (id: string) => {
      seen.add(id);
      invalidate(id);
    };
  }
  const marker = `cal_marker_${process.pid}_${++markers}`;
  await db.adminPool.query(`SELECT pg_notify('calendar_sync_changed', $1)`, [marker]);
  await waitFor(() => heard.has(marker));
}

export interface RunningCalendarSync {
  url: string;
  service: RunningService<CalendarSyncConfig>;
  /** Every part: the harness runs the service as one process (PROCESS_ROLE all). */
  parts: Required<CalendarSyncParts>;
  config: Readonly<CalendarSyncConfig>;
  /** Every log line this instance wrote (JSON), at debug level. */
  logs: string[];
  stop(): Promise<void>;
}

/** One calendar-sync process, running the parts its PROCESS_ROLE (`env`) names: `parts` holds what it started. */
export interface CalendarSyncProcess extends Omit<RunningCalendarSync, 'parts'> {
  parts: CalendarSyncParts;
}

export interface CalendarSyncStartOptions {
  db: TestDatabase;
  amqp: TestAmqp;
  availabilityUrl: string;
  env?: Record<string, string>;
  setup?: SetupOptions;
}

/** One calendar-sync instance in-process, exactly as main.ts wires it, on a free port. */
export async function startCalendarSync(opts: CalendarSyncStartOptions): Promise<RunningCalendarSync> {
  const started = await startCalendarSyncProcess(opts);
  const { consumer, refresher, relay } = started.parts;
  if (!consumer || !refresher || !relay) throw new Error(`calendar-sync started without its background work (PROCESS_ROLE ${started.config.PROCESS_ROLE})`);
  await consumer.ready();
  return { ...started, parts: { ...started.parts, consumer, refresher, relay } };
}

/** startCalendarSync for any PROCESS_ROLE (`env.PROCESS_ROLE`): an `api` process has no background parts. */
export async function startCalendarSyncProcess(opts: CalendarSyncStartOptions): Promise<CalendarSyncProcess> {
  const { stream, logs } = captureLogs();
  const config = readConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    NODE_ENV: 'test',
    PORT: '0',
    DATABASE_URL: opts.db.urlFor('calendar-sync'),
    AMQP_URL: opts.amqp.url,
    AMQP_PREFIX: opts.amqp.prefix,
    AVAILABILITY_URL: opts.availabilityUrl,
    SECRETS_KEY,
    LOG_LEVEL: 'debug',
    // The refresher's timer stays out of the way; tests call runOnce() when they mean it.
    REFRESH_INTERVAL_MS: '3600000',
    PROVIDER_TIMEOUT_MS: '3000',
    CALENDAR_WRITE_RETRY_DELAYS_MS: '200,400',
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...opts.env,
  });
  const logger = createLogger({ service: 'calendar-sync', stream, level: 'debug' });
  let parts: CalendarSyncParts | undefined;
  const service = await runService({
    name: 'calendar-sync',
    config,
    access: CALENDAR_SYNC_ACCESS,
    brokerCritical: true,
    handleSignals: false,
    logger,
    setup: (ctx) => {
      parts = setupCalendarSync(ctx, opts.setup);
    },
  });
  await service.broker.waitForConnection();
  return { url: loopbackUrl(service.server), service, parts: parts!, config, logs, stop: () => service.stop('test done') };
}

/** Publishes booking.* messages as the booking service would. */
export async function startPublisher(amqp: TestAmqp): Promise<{ broker: Broker; publish(kind: EventKind, workspaceId: string, booking: Booking, id?: string): Promise<string> }> {
  const quiet = createLogger({ service: 'test-publisher', stream: new PassThrough(), level: 'error' });
  const broker = createBroker({ url: amqp.url, prefix: amqp.prefix, name: 'test-publisher', logger: quiet });
  await broker.waitForConnection();
  return {
    broker,
    async publish(kind, workspaceId, booking, id) {
      const event = makeEvent(kind as 'booking.created', {
        workspaceId,
        id,
        data: { booking, internal: { blocked_from: booking.start_at, blocked_to: booking.end_at, invitation_id: null } },
      });
      await broker.publish(event);
      return event.id;
    },
  };
}

/** The next version of a Booking after a reschedule or a cancel, as the booking service would publish it. */
export function rescheduled(b: Booking, start: Date): Booking {
  return {
    ...b,
    version: b.version + 1,
    start_at: toTimestamp(start),
    end_at: toTimestamp(new Date(start.getTime() + 30 * 60_000)),
    rescheduled_at: toTimestamp(new Date()),
    calendar: { status: 'pending', error_code: null },
  };
}

export function cancelled(b: Booking): Booking {
  return { ...b, version: b.version + 1, status: 'cancelled', cancelled_at: toTimestamp(new Date()), calendar: { status: 'pending', error_code: null } };
}

/** Payloads of this service's outbox, oldest first. */
export async function outboxEvents(db: TestDatabase, type?: string): Promise<Array<{ id: string; type: string; workspace_id: string; data: any; published: boolean }>> {
  const res = await db.adminPool.query(
    `SELECT payload, published_at FROM calendar_sync.outbox ${type ? 'WHERE type = $1' : ''} ORDER BY created_at, id`,
    type ? [type] : [],
  );
  return res.rows.map((r) => ({ ...r.payload, published: r.published_at !== null }));
}

/** Calls calendar-sync directly with the credential its real caller sends (the gateway for /admin, availability for busy). */
export async function call(base: string, method: string, path: string, json?: unknown): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(await credentialFor('calendar-sync', path)), ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export function busyPath(ws: string, host: string, from: Date, to: Date): string {
  return `/internal/v1/workspaces/${ws}/hosts/${host}/busy?from=${toTimestamp(from)}&to=${toTimestamp(to)}`;
}

/** Queues and exchanges a calendar-sync instance makes under the test prefix. */
export async function cleanupBroker(amqp: TestAmqp, retryDelays: number[]): Promise<void> {
  const queues = ['calendar-sync', 'calendar-sync.dlq', ...retryDelays.map((d) => `calendar-sync.retry.${d}ms`)];
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, queues, ['scheduling.events', 'scheduling.dlx']);
}
