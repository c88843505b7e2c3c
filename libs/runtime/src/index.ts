import type { Server } from 'node:http';
import type { Pool } from 'pg';
import { checkPostgres, createDb, createPool, type Db } from '@sched/db';
import {
  createCredentialSigner,
  createCredentialVerifier,
  createHttpApp,
  parseInternalKeyRing,
  type AccessTable,
  type CredentialSigner,
  type HttpApp,
  type ReadinessChecks,
} from '@sched/http';
import { createLifecycle, type Lifecycle } from '@sched/lifecycle';
import { createLogger, type Logger } from '@sched/logger';
import { createBroker, type Broker } from '@sched/messaging';

/** The part of every service's config the runtime reads (see serviceEnv in @sched/config). */
export interface BaseServiceConfig {
  PORT: number;
  HOST: string;
  DATABASE_URL: string;
  AMQP_URL: string;
  AMQP_PREFIX: string;
  LOG_LEVEL: string;
  SHUTDOWN_TIMEOUT_MS: number;
  INTERNAL_AUTH_KEYS: string;
}

export interface ServiceContext<C extends BaseServiceConfig> {
  name: string;
  config: Readonly<C>;
  logger: Logger;
  pool: Pool;
  db: Db;
  broker: Broker;
  http: HttpApp;
  /** Signs the internal credential of this service's calls to others (give it to createInternalClient). */
  signer: CredentialSigner;
  /** Registers work to stop on shutdown; stopped before the broker and the pool, after HTTP stops accepting. */
  onStop(name: string, fn: () => Promise<void> | void): void;
}

export interface RunServiceOptions<C extends BaseServiceConfig> {
  name: string;
  config: Readonly<C>;
  /**
   * Whether /readyz fails while RabbitMQ is unreachable. False for services whose HTTP answers never
   * need the broker (events wait in the outbox), so a broker outage does not take them out of rotation.
   */
  brokerCritical: boolean;
  /** Who may call each route (docs/security.md): every route the setup registers needs its rule. */
  access: AccessTable;
  /** Registers routes, consumers and relays. Runs after Postgres, the broker and the app exist, before listening. */
  setup(ctx: ServiceContext<C>): Promise<void> | void;
  /** Install SIGTERM/SIGINT handlers (processes: yes; in-process tests: no). */
  handleSignals?: boolean;
  logger?: Logger;
  /** More readiness checks beside postgres and rabbitmq. */
  readiness?: ReadinessChecks;
}

export interface RunningService<C extends BaseServiceConfig> extends ServiceContext<C> {
  server: Server;
  lifecycle: Lifecycle;
  stop(reason?: string): Promise<void>;
}

/**
 * Boots one service process: Postgres pool, RabbitMQ connection (in the background: a service starts
 * while the broker is down), the HTTP app with /healthz /readyz /metrics, the service's own setup, then
 * listens. Stops in reverse: HTTP stops accepting and drains, then consumers and relays, the broker, the pool.
 */
export async function runService<C extends BaseServiceConfig>(opts: RunServiceOptions<C>): Promise<RunningService<C>> {
  const { config, name } = opts;
  const logger = opts.logger ?? createLogger({ service: name, level: config.LOG_LEVEL });
  const lifecycle = createLifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
  if (opts.handleSignals ?? true) lifecycle.installSignalHandlers();

  // Read first: a malformed ring stops the start-up before any connection is opened.
  const ring = await parseInternalKeyRing(config.INTERNAL_AUTH_KEYS);
  const pool = createPool(config.DATABASE_URL, { applicationName: name, logger });
  lifecycle.onStop('postgres', () => pool.end());
  const broker = createBroker({ url: config.AMQP_URL, prefix: config.AMQP_PREFIX, name, logger });
  lifecycle.onStop('rabbitmq', () => broker.close());

  const http = createHttpApp({
    service: name,
    logger,
    internalAuth: { verifier: createCredentialVerifier({ service: name, ring }), access: opts.access },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    readiness: {
      postgres: () => checkPostgres(pool),
      rabbitmq: opts.brokerCritical ? () => broker.check() : { critical: false, check: () => broker.check() },
      ...opts.readiness,
    },
  });
  const ctx: ServiceContext<C> = {
    name,
    config,
    logger,
    pool,
    db: createDb(pool),
    broker,
    http,
    signer: createCredentialSigner({ service: name, ring }),
    onStop: (what, fn) => lifecycle.onStop(what, async () => fn()),
  };
  try {
    await opts.setup(ctx);
    http.finalize();
    const server = await http.listen(config.PORT, config.HOST);
    lifecycle.onStop('http', () => http.close());
    return { ...ctx, server, lifecycle, stop: async (reason = 'stop') => void (await lifecycle.stop(reason)) };
  } catch (err) {
    logger.error(`${name} failed to start`, { err });
    await lifecycle.stop('start-up failed');
    throw err;
  }
}

export { startRetention, type RetentionConfig } from './retention';
export { registerSecretsRoutes } from './secrets-routes';
