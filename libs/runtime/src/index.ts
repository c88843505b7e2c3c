import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { lowerCpuPriority } from './cpu-nice';
import { processParts, type ProcessParts, type ProcessRole } from './process-role';

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
  /** The process's CPU nice value (0..19), applied once at start (lowerCpuPriority). */
  CPU_NICE: number;
  /** Which part of the service this process runs (process-role.ts); unset: `all`. */
  PROCESS_ROLE?: ProcessRole;
}

export interface ServiceContext<C extends BaseServiceConfig, B extends Broker | undefined = Broker> {
  name: string;
  config: Readonly<C>;
  logger: Logger;
  pool: Pool;
  db: Db;
  /** The RabbitMQ connection; `undefined` for a service run with `broker: false` (the gateway). */
  broker: B;
  http: HttpApp;
  /** Signs the internal credential of this service's calls to others (give it to createInternalClient). */
  signer: CredentialSigner;
  /** Registers work to stop on shutdown; stopped before the broker and the pool, after HTTP stops accepting. */
  onStop(name: string, fn: () => Promise<void> | void): void;
  /**
   * The parts this process runs (PROCESS_ROLE): the setup registers its routes under `runs.api` and
   * starts its consumers, relays and jobs under `runs.background`. In a `worker` no route can be
   * registered (it has no access rule: the process serves /healthz, /readyz and /metrics only).
   */
  runs: ProcessParts;
}

interface CommonRunOptions<C extends BaseServiceConfig> {
  name: string;
  config: Readonly<C>;
  /**
   * Who may call each route (docs/security.md): every route the setup registers needs its rule.
   * `'public'`: the public edge (the gateway), whose callers carry API keys and the admin token, which
   * its own middleware checks; no internal credential is asked.
   */
  access: AccessTable | 'public';
  /**
   * The operations listener: `/readyz` and `/metrics` are served only there (with `/healthz`), the app's
   * own port keeps `/healthz` only (createHttpApp `separateOps`). It listens after the app's port, so
   * ready means serving; the start is logged as `<name> listening` with both ports. Unset: one port.
   * A function of the config (e.g. the gateway's `opsPortOf`: OPS_PORT, else PORT + 1000).
   */
  opsPort?: (config: Readonly<C>) => number;
  /** Install SIGTERM/SIGINT handlers (processes: yes; in-process tests: no). */
  handleSignals?: boolean;
  logger?: Logger;
  /** More readiness checks beside postgres and rabbitmq. */
  readiness?: ReadinessChecks;
  /**
   * False for a service with no background part (the gateway: what it runs is its API and a job that
   * goes with it): PROCESS_ROLE=worker is then refused at start. Default true.
   */
  background?: boolean;
}

export interface RunServiceOptions<C extends BaseServiceConfig> extends CommonRunOptions<C> {
  /**
   * Whether /readyz fails while RabbitMQ is unreachable. False for services whose HTTP answers never
   * need the broker (events wait in the outbox), so a broker outage does not take them out of rotation.
   * A `worker` process (PROCESS_ROLE) is always broker-critical: its work is the broker's messages and
   * the events it relays; `api` and `all` follow this setting.
   */
  brokerCritical: boolean;
  /** A RabbitMQ connection (the default); see RunServiceWithoutBrokerOptions for none. */
  broker?: true;
  /**
   * The service's composition root (its `src/app.ts` setup): registers routes, consumers, relays and jobs.
   * Runs after Postgres, the broker and the app exist, before listening; awaited. What it returns is for
   * in-process tests that call it themselves; runService ignores it.
   */
  setup(ctx: ServiceContext<C>): unknown;
}

export interface RunServiceWithoutBrokerOptions<C extends BaseServiceConfig> extends CommonRunOptions<C> {
  /** No RabbitMQ connection and no `rabbitmq` readiness check: a service that owns no queue and publishes nothing. */
  broker: false;
  /** As RunServiceOptions.setup, with `ctx.broker` undefined. */
  setup(ctx: ServiceContext<C, undefined>): unknown;
}

export interface RunningService<C extends BaseServiceConfig, B extends Broker | undefined = Broker> extends ServiceContext<C, B> {
  server: Server;
  /** The operations listener, when `opsPort` was given. */
  opsServer?: Server;
  lifecycle: Lifecycle;
  stop(reason?: string): Promise<void>;
}

/**
 * Boots one service process, running the parts PROCESS_ROLE names (process-role.ts; `ctx.runs` tells the
 * setup: `api` registers routes, `worker` starts the background work and gets no route access, `all`
 * both): first its CPU priority (CPU_NICE: every thread of the process, so what the
 * service starts later inherits it; a refusal of the OS is a warning, not a failed start), then Postgres pool, RabbitMQ connection (in the background: a service starts
 * while the broker is down; none with `broker: false`), the HTTP app with /healthz /readyz /metrics, the
 * service's own setup, then listens (the public port, then the operations port if any). Stops in reverse:
 * HTTP stops accepting and drains, then what the setup registered, the broker, the pool.
 */
export function runService<C extends BaseServiceConfig>(opts: RunServiceOptions<C>): Promise<RunningService<C>>;
export function runService<C extends BaseServiceConfig>(opts: RunServiceWithoutBrokerOptions<C>): Promise<RunningService<C, undefined>>;
export async function runService<C extends BaseServiceConfig>(
  opts: RunServiceOptions<C> | RunServiceWithoutBrokerOptions<C>,
): Promise<RunningService<C, Broker | undefined>> {
  const { config, name } = opts;
  const logger = opts.logger ?? createLogger({ service: name, level: config.LOG_LEVEL });
  let runs: ProcessParts;
  try {
    runs = processParts(config.PROCESS_ROLE);
    if (runs.role === 'worker' && opts.background === false) throw new Error(`${name} has no background part: PROCESS_ROLE must be all or api, not worker`);
  } catch (err) {
    logger.error(`${name} failed to start`, { err });
    throw err;
  }
  const lifecycle = createLifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
  if (opts.handleSignals ?? true) lifecycle.installSignalHandlers();
  const priority = lowerCpuPriority(config.CPU_NICE);
  if (priority.error) logger.warn('CPU_NICE not applied: the OS refused', { cpu_nice: config.CPU_NICE, nice: priority.nice, err: priority.error });

  // Read first: a malformed ring stops the start-up before any connection is opened.
  const ring = await parseInternalKeyRing(config.INTERNAL_AUTH_KEYS);
  const opsPort = opts.opsPort?.(config);
  const pool = createPool(config.DATABASE_URL, { applicationName: name, logger });
  lifecycle.onStop('postgres', () => pool.end());
  let broker: Broker | undefined;
  const readiness: ReadinessChecks = { postgres: () => checkPostgres(pool) };
  if (opts.broker !== false) {
    const b = createBroker({ url: config.AMQP_URL, prefix: config.AMQP_PREFIX, name, logger });
    lifecycle.onStop('rabbitmq', () => b.close());
    readiness.rabbitmq = opts.brokerCritical || runs.role === 'worker' ? () => b.check() : { critical: false, check: () => b.check() };
    broker = b;
  }

  const http = createHttpApp({
    service: name,
    logger,
    // A worker serves no route: with no access rule, registering one fails the start (createHttpApp).
    internalAuth: opts.access === 'public' ? undefined : { verifier: createCredentialVerifier({ service: name, ring }), access: runs.api ? opts.access : {} },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    separateOps: opsPort !== undefined,
    readiness: { ...readiness, ...opts.readiness },
  });
  const base = {
    name,
    config,
    logger,
    pool,
    db: createDb(pool),
    http,
    signer: createCredentialSigner({ service: name, ring }),
    onStop: (what: string, fn: () => Promise<void> | void) => lifecycle.onStop(what, async () => fn()),
    runs,
  };
  try {
    if (opts.broker === false) await opts.setup({ ...base, broker: undefined });
    else await opts.setup({ ...base, broker: broker! });
    http.finalize();
    const server = await http.listen(config.PORT, config.HOST);
    lifecycle.onStop('http', () => http.close());
    let opsServer: Server | undefined;
    if (opsPort !== undefined) opsServer = await http.listenOps(opsPort, config.HOST);
    const port = (server.address() as AddressInfo | null)?.port ?? config.PORT;
    logger.info(`${name} listening`, { port, ...(opsPort !== undefined ? { ops_port: opsPort } : {}), host: config.HOST, cpu_nice: priority.nice, role: runs.role });
    return { ...base, broker, server, opsServer, lifecycle, stop: async (reason = 'stop') => void (await lifecycle.stop(reason)) };
  } catch (err) {
    logger.error(`${name} failed to start`, { err });
    await lifecycle.stop('start-up failed');
    throw err;
  }
}

export { processParts, type ProcessParts, type ProcessRole } from './process-role';
export { startRetention, type RetentionConfig } from './retention';
export { registerSecretsRoutes } from './secrets-routes';
