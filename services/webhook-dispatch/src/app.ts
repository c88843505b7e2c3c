import { systemResolveAll, type ResolveAll } from '@sched/address-policy';
import type { Pool } from 'pg';
import { createDb, createPool } from '@sched/db';
import { createCursorCodec } from '@sched/pagination';
import { registerSecretsRoutes, startRetention, type ServiceContext } from '@sched/runtime';
import { SEALED_COLUMNS } from './store/sealed-columns';
import { secretBoxFromEnv, withOpenCache } from '@sched/secrets';
import type { WebhookDispatchConfig } from './config';
import { createDispatchMetrics } from './delivery/dispatch.metrics';
import { startDeliveryWorker, type DeliveryWorker } from './delivery/delivery.worker';
import { createWebhookSender } from './delivery/webhook.sender';
import { createDeliveryDeadLetterPublisher } from './events/dead-letter.publisher';
import { createDeadLetterTools } from './events/dead-letter.tools';
import { startEventConsumer } from './events/event.consumer';
import { registerDeadLetterRoutes } from './http/dead-letter.routes';
import { registerWebhookDeliveryRoutes } from './http/webhook-delivery.routes';
import { registerWebhookEndpointRoutes } from './http/webhook-endpoint.routes';
import { createDeliveryStore } from './store/delivery.queries';
import { pendingBacklog } from './store/delivery-worker.queries';
import { eventIngest, type EventIngest } from './store/ingest-batch.queries';
import { createEndpointStore } from './store/endpoint.queries';
import { webhookDispatchRetentionRules } from './store/retention';

/** LISTEN + claims + attempt records + dead-letter sweep; queries are short, attempts hold none. */
const WORKER_POOL_SIZE = 5;

export interface SetupOptions {
  /** DNS used by the SSRF guard, at registration and on every connection; tests fake it. */
  resolveAll?: ResolveAll;
  /** Consumer retry delays of the messaging library (not the webhook schedule); tests shorten them. */
  consumerRetryDelaysMs?: readonly number[];
}

/** The background work setupWebhookDispatch started; every field `undefined` in an `api` process (PROCESS_ROLE). */
export interface WebhookDispatch {
  worker?: DeliveryWorker;
  /** The ingest statements' group commit (tests read its counters). */
  ingest?: EventIngest;
  /** The delivery worker's connections (tests read their settings). */
  workerPool?: Pool;
}

/**
 * Wires the service into runService's context: admin routes, the event consumer (writes deliveries
 * with the inbox row, claimed for this replica's worker) and the delivery worker (sends them).
 * Stops in reverse on shutdown.
 *
 * PROCESS_ROLE (ctx.runs): the API is the admin routes (endpoints, deliveries and their replay, dead
 * letters, secrets rotation); the background work is the event consumer, the delivery worker with its
 * own pool, the dead-letter publisher and the retention job. A replay or a new delivery written by one
 * process wakes the worker of another through the deliveries NOTIFY, as between replicas.
 */
export function setupWebhookDispatch(ctx: ServiceContext<WebhookDispatchConfig>, opts: SetupOptions = {}): WebhookDispatch {
  const { config, db, broker, logger } = ctx;
  // Every attempt signs with its endpoint's secret: opened once, then from memory (libs/secrets withOpenCache).
  const secrets = withOpenCache(secretBoxFromEnv(config));
  const resolveAll = opts.resolveAll ?? systemResolveAll;

  if (ctx.runs.api) {
    const endpointStore = createEndpointStore(db);
    registerWebhookEndpointRoutes(ctx.http, {
      store: endpointStore,
      sealer: { seal: (secret, endpointId) => secrets.seal(secret, endpointId) },
      resolveHost: async (host) => (await resolveAll(host)).map((a) => a.address),
      mode: config.WEBHOOK_MODE,
      rotationOverlapMs: config.WEBHOOK_ROTATION_OVERLAP_MS,
      now: () => new Date(),
    });
    registerWebhookDeliveryRoutes(ctx.http, {
      deliveries: createDeliveryStore(db),
      endpoints: endpointStore,
      cursors: createCursorCodec(config.CURSOR_SECRET),
    });
    registerDeadLetterRoutes(ctx.http, createDeadLetterTools(broker));
    registerSecretsRoutes(ctx.http, 'webhook-dispatch', { pool: ctx.pool, box: secrets, columns: SEALED_COLUMNS });
  }

  const parts: WebhookDispatch = {};
  if (ctx.runs.background) {
    const sender = createWebhookSender({ mode: config.WEBHOOK_MODE, timeoutMs: config.WEBHOOK_TIMEOUT_MS, resolveAll });
    const deadLetters = createDeliveryDeadLetterPublisher(broker);
    // The worker's own connections (one of them holds LISTEN): a burst of events keeping every consumer
    // transaction busy must not make sends wait for a connection, nor the other way round.
    // They commit without waiting for the WAL flush (synchronous_commit off; Postgres flushes within a few
    // hundred ms): what they write is an attempt's outcome, a lease, a dead letter marked published, never
    // an event. Losing the last of those writes in a Postgres crash is what a crash of this service between
    // the receiver's answer and the record already means: the lease expires and the delivery is sent again
    // with the same webhook-id (at-least-once), or its DLQ message is published again with the same id. The
    // ingest statement, which the consumer's acknowledgement waits for, commits durably on ctx.pool. A
    // synchronous commit cost the Postgres backend about 0.15 ms of CPU more per record (its fdatasync).
    const workerPool = createPool(config.DATABASE_URL, {
      max: WORKER_POOL_SIZE,
      applicationName: 'webhook-dispatch-worker',
      logger,
      asyncCommit: true,
    });
    const worker = startDeliveryWorker({
      db: createDb(workerPool),
      pool: workerPool,
      sender,
      secrets,
      deadLetters,
      metrics: createDispatchMetrics(ctx.http.registry, () => pendingBacklog(db)),
      logger,
      policy: {
        scheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS,
        jitterRatio: config.WEBHOOK_JITTER_RATIO,
        retryAfterMaxMs: config.WEBHOOK_RETRY_AFTER_MAX_MS,
      },
      perEndpointConcurrency: config.WEBHOOK_PER_ENDPOINT_CONCURRENCY,
      maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
      leaseMs: config.WEBHOOK_LEASE_MS,
      pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    });
    const ingest = eventIngest({ pool: ctx.pool, claims: worker.ingest });
    const consumer = startEventConsumer({ broker, db, logger, ingest, retryDelaysMs: opts.consumerRetryDelaysMs });

    // Registered in this order, stopped in reverse: the worker finishes its attempts before the consumer stops.
    ctx.onStop('event consumer', () => consumer.stop());
    ctx.onStop('dead-letter publisher', () => deadLetters.close());
    ctx.onStop('webhook sender', () => sender.close());
    ctx.onStop('delivery worker pool', () => workerPool.end());
    ctx.onStop('delivery worker', () => worker.stop());
    startRetention(ctx, webhookDispatchRetentionRules(config));
    logger.info('webhook dispatch started', { mode: config.WEBHOOK_MODE, attempts: config.WEBHOOK_RETRY_SCHEDULE_MS.length + 1 });
    Object.assign(parts, { worker, ingest, workerPool });
  }
  return parts;
}
