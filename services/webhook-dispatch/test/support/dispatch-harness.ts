import { WEBHOOK_DISPATCH_ACCESS } from '../../src/http/access';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { makeEvent, type Booking, type EventMessage, type PublicEventKind } from '@sched/contracts';
import { createLogger } from '@sched/logger';
import { createBroker, serviceQueueNames, type Broker } from '@sched/messaging';
import { runService, type RunningService } from '@sched/runtime';
import { captureLogs, cleanupAmqpPrefix, loopbackUrl, makeBooking, waitForLog, type TestAmqp, type TestDatabase, TEST_INTERNAL_AUTH_KEYS, credentialFor } from '@sched/testing';
import { parseDispatchConfig, type WebhookDispatchConfig } from '../../src/config';
import { setupWebhookDispatch, type SetupOptions, type WebhookDispatch } from '../../src/app';

export const SECRETS_KEY = randomBytes(32).toString('base64');
export const CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef-0123';
/** Short consumer retries (the messaging library's, not the webhook schedule). */
export const CONSUMER_RETRY_DELAYS_MS = [100];

export interface DispatchUnderTest {
  url: string;
  service: RunningService<WebhookDispatchConfig>;
  /** Every part: the harness runs the service as one process (PROCESS_ROLE all). */
  dispatch: Required<WebhookDispatch>;
  /** Every JSON log line the service wrote. */
  logs: string[];
  stop(): Promise<void>;
}

/** One process of the service as main.ts wires it, running the parts its PROCESS_ROLE (env) names: `dispatch` holds what it started. */
export interface DispatchProcess extends Omit<DispatchUnderTest, 'dispatch'> {
  dispatch: WebhookDispatch;
}

/** The service in-process, as main.ts wires it, on the test database and AMQP prefix, on a free port. */
export async function startDispatch(db: TestDatabase, amqp: TestAmqp, env: Record<string, string> = {}, opts: SetupOptions = {}): Promise<DispatchUnderTest> {
  const started = await startDispatchProcess(db, amqp, env, opts);
  const { worker, ingest, workerPool } = started.dispatch;
  if (!worker || !ingest || !workerPool) throw new Error(`webhook-dispatch started without its background work (PROCESS_ROLE ${started.service.config.PROCESS_ROLE})`);
  return { ...started, dispatch: { worker, ingest, workerPool } };
}

/** startDispatch for any PROCESS_ROLE (`env.PROCESS_ROLE`): an `api` process has no background parts. */
export async function startDispatchProcess(db: TestDatabase, amqp: TestAmqp, env: Record<string, string> = {}, opts: SetupOptions = {}): Promise<DispatchProcess> {
  const { stream, logs } = captureLogs();
  const config = parseDispatchConfig({
    INTERNAL_AUTH_KEYS: TEST_INTERNAL_AUTH_KEYS,
    PORT: '0',
    DATABASE_URL: db.urlFor('webhook-dispatch'),
    AMQP_URL: amqp.url,
    AMQP_PREFIX: amqp.prefix,
    SECRETS_KEY,
    CURSOR_SECRET,
    WEBHOOK_RETRY_SCHEDULE_MS: '50,50,50,50,50,50,50',
    WEBHOOK_JITTER_RATIO: '0',
    WEBHOOK_TIMEOUT_MS: '2000',
    LOG_LEVEL: 'debug',
    ...env,
  });
  let dispatch: WebhookDispatch | undefined;
  const service = await runService({
    name: 'webhook-dispatch',
    config,
    access: WEBHOOK_DISPATCH_ACCESS,
    brokerCritical: true,
    handleSignals: false,
    logger: createLogger({ service: 'webhook-dispatch', level: config.LOG_LEVEL, stream }),
    setup: (ctx) => {
      dispatch = setupWebhookDispatch(ctx, { consumerRetryDelaysMs: CONSUMER_RETRY_DELAYS_MS, ...opts });
    },
  });
  await service.broker.waitForConnection();
  return { url: loopbackUrl(service.server), service, dispatch: dispatch!, logs, stop: () => service.stop('test done') };
}

/** Deletes this test file's queues and exchanges. */
export async function cleanupBroker(amqp: TestAmqp, services: Array<{ service: string; retryDelaysMs?: readonly number[] }> = []): Promise<void> {
  const all = [{ service: 'webhook-dispatch', retryDelaysMs: CONSUMER_RETRY_DELAYS_MS }, ...services];
  const queues = all.flatMap(({ service, retryDelaysMs }) => {
    const q = serviceQueueNames(amqp.prefix, service, retryDelaysMs ?? []);
    return [q.queue, q.dlq, ...q.retries.map((r) => r.queue)];
  });
  await cleanupAmqpPrefix(amqp.url, amqp.prefix, queues, ['scheduling.events', 'scheduling.dlx']);
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the request arrived (ms since epoch) and what it was answered. */
  at: number;
  status: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface Receiver {
  url: string;
  requests: Received[];
  /** TCP connections accepted, to prove that nothing was even attempted. */
  connections(): number;
  /** Decides each answer; n is the 1-based number of the request, `request` its headers. */
  behave(fn: (n: number, request: { headers: http.IncomingHttpHeaders }) => Reply): void;
  close(): Promise<void>;
}

/** A real webhook receiver: node http server on 127.0.0.1, port 0. */
export async function startReceiver(fn: (n: number, request: { headers: http.IncomingHttpHeaders }) => Reply = () => ({ status: 200 })): Promise<Receiver> {
  let behaviour = fn;
  let connections = 0;
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = behaviour(requests.length + 1, { headers: req.headers });
      const received: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at, status: reply.status };
      requests.push(received);
      setTimeout(() => {
        res.writeHead(reply.status, reply.headers ?? {});
        res.end('ok');
      }, reply.delayMs ?? 0);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    connections: () => connections,
    behave: (next) => (behaviour = next),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Receivers a test file starts, closed together in its afterAll. */
export function receiverPool(): { start: typeof startReceiver; closeAll(): Promise<void> } {
  const started: Receiver[] = [];
  return {
    start: async (...args) => {
      const r = await startReceiver(...args);
      started.push(r);
      return r;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((r) => r.close()));
    },
  };
}

/** Kept for delivery.test.ts only, until its fixed waits become workerIdle (or settle, with a reason). */
/** A delivery-worker poll short enough for `workerIdle` to answer quickly. */
export const FAST_POLL = { WEBHOOK_POLL_INTERVAL_MS: '100' };

/**
 * Waits until the delivery worker of `svc` has twice, after `from` (the length of `svc.logs` before
 * the step under test), found nothing to claim with nothing in flight (its debug "delivery worker
 * round" line): the second of those rounds began after `from`, so whatever this replica was going to
 * send by then has been sent and answered. How a test proves that nothing more is sent.
 */
export async function workerIdle(svc: DispatchUnderTest, from: number): Promise<void> {
  await waitForLog(svc.logs, { message: 'delivery worker round', claimed: 0, in_flight: 0 }, { from, count: 2, timeoutMs: 10000 });
}


export interface Publisher {
  broker: Broker;
  /** Publishes a public event on the prefixed exchange, as the booking service's outbox relay would. */
  publish(kind: PublicEventKind, workspaceId: string, opts?: { id?: string; booking?: Booking }): Promise<EventMessage<PublicEventKind>>;
  close(): Promise<void>;
}

export async function startPublisher(amqp: TestAmqp): Promise<Publisher> {
  const quiet = createLogger({ service: 'test-publisher', level: 'error', stream: new PassThrough() });
  const broker = createBroker({ url: amqp.url, prefix: amqp.prefix, name: 'test-publisher', logger: quiet });
  await broker.waitForConnection();
  return {
    broker,
    async publish(kind, workspaceId, opts = {}) {
      const booking = opts.booking ?? makeBooking();
      const internal = { blocked_from: booking.start_at, blocked_to: booking.end_at, invitation_id: null };
      const data =
        kind === 'calendar.failed'
          ? { booking, error_code: 'provider_unavailable' as const }
          : kind === 'calendar.created'
            ? { booking }
            : { booking, internal };
      const event = makeEvent(kind, { workspaceId, data: data as never, ...(opts.id ? { id: opts.id } : {}) }) as EventMessage<PublicEventKind>;
      await broker.publish(event);
      return event;
    },
    close: () => broker.close(),
  };
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** Calls the service as the gateway forwards admin calls: an operator credential for the {ws} of the path (or `ws`). */
export async function call(base: string, method: string, path: string, opts: { ws?: string; json?: unknown } = {}): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...(await credentialFor('webhook-dispatch', path, { workspaceId: opts.ws })) };
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON (204) */
  }
  return { status: res.status, headers: res.headers, body };
}

export async function createEndpoint(base: string, ws: string, url: string, events: PublicEventKind[]): Promise<{ id: string; secret: string }> {
  const res = await call(base, 'POST', `/admin/v1/workspaces/${ws}/webhook-endpoints`, { ws, json: { url, events } });
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.id, secret: res.body.data.secret };
}

export async function deliveriesOf(base: string, ws: string, query = ''): Promise<any[]> {
  const res = await call(base, 'GET', `/admin/v1/workspaces/${ws}/webhook-deliveries${query}`, { ws });
  if (res.status !== 200) throw new Error(`deliveries not listed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}
