import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { AmqpConnectionManagerClass, type AmqpConnectionManager } from 'amqp-connection-manager';
import type { Logger } from '@sched/logger';
import { DEFAULT_CONFIRM_TIMEOUT_MS } from './confirm-publish';
import { assertEnvelope, type EventEnvelope } from './envelope';
import { openManagedChannel, type ManagedChannel } from './managed-channel';
import { describeError } from './message-headers';
import { assertBaseTopology, isRoutingKeyOf, topologyNames, type TopologyNames } from './topology';

export type MessagingLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

export interface BrokerOptions {
  url: string;
  /** Shown as the connection name in RabbitMQ, so on-call can tell replicas apart. */
  name: string;
  logger: MessagingLogger;
  /** Put in front of every exchange and queue name; tests use it to share one broker. */
  prefix?: string;
  /** Dead peers are noticed after about two missed heartbeats. Default 10 s. */
  heartbeatSeconds?: number;
  /** Wait before reconnecting (and before reopening a channel the broker closed): doubles per failed attempt up to the max, with jitter. Defaults 200 ms, 15 s. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  confirmTimeoutMs?: number;
}

/** The broker cannot take a message right now; callers (the outbox relay) try again later. */
export class BrokerUnavailableError extends Error {
  readonly code = 'BROKER_UNAVAILABLE';
  constructor(message: string) {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

export interface Broker {
  readonly name: string;
  readonly names: TopologyNames;
  /**
   * Publishes to `scheduling.events` with routing key `routingKey` (default: the envelope's type; else the
   * type followed by qualifiers, `<type>.<qualifier>…`, see isRoutingKeyOf); resolves on the broker's
   * confirm, rejects at once while disconnected.
   */
  publish(envelope: EventEnvelope, routingKey?: string): Promise<void>;
  isConnected(): boolean;
  /** Readiness: resolves when connected with an open channel, else rejects with BrokerUnavailableError. */
  check(): Promise<void>;
  waitForConnection(timeoutMs?: number): Promise<void>;
  /** Stops consumers (waiting for their in-flight handlers), then closes the channel and connection. */
  close(): Promise<void>;
}

export interface ChannelSpec {
  /** For log lines: the queue a consumer reads. */
  name: string;
  /** Runs on every new channel (after each reconnect, and after the broker closed the channel alone). */
  setup(ch: ConfirmChannel): Promise<void>;
  onReady?(ch: ConfirmChannel): void;
  onLost?(ch: ConfirmChannel): void;
}

export interface BrokerInternals {
  logger: MessagingLogger;
  confirmTimeoutMs: number;
  /** The live connection, for short-lived private channels (the dead-letter tools). */
  connection(): ChannelModel | undefined;
  /** A channel kept open across reconnects (a consumer's). */
  openChannel(spec: ChannelSpec): ManagedChannel;
  /** Work stopped by `broker.close()` before the connection goes (a consumer: cancel, drain, close its channel). */
  onClose(stop: () => Promise<void>): () => void;
}

// Kept off the public Broker type: consumers and the dead-letter tools need the raw connection, services do not.
const internalsByBroker = new WeakMap<Broker, BrokerInternals>();

export function brokerInternals(broker: Broker): BrokerInternals {
  const internals = internalsByBroker.get(broker);
  if (!internals) throw new Error('Not a broker made by createBroker');
  return internals;
}

function safeTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname || '/'}`;
  } catch {
    return '(unparsable AMQP URL)';
  }
}

/**
 * The service's RabbitMQ connection. amqp-connection-manager owns the connection: it reconnects, and
 * on every connect opens our channels again and runs their setup (topology, prefetch, subscription).
 * What is ours: the backoff between attempts (its retry interval is a fixed number, which we move),
 * reopening a channel the broker closed alone (managed-channel.ts), failing fast while disconnected
 * rather than queueing in memory (the outbox is the queue), and the log lines.
 */
export function createBroker(opts: BrokerOptions): Broker {
  const names = topologyNames(opts.prefix ?? '');
  const log = opts.logger;
  const target = safeTarget(opts.url);
  const initialDelayMs = opts.reconnect?.initialDelayMs ?? 200;
  const maxDelayMs = opts.reconnect?.maxDelayMs ?? 15_000;
  const confirmTimeoutMs = opts.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const stoppers = new Set<() => Promise<void>>();
  // A dropped socket is noticed inside whatever handler last wrote to it; without this its
  // log lines and the reconnects would carry that unrelated event_id forever.
  const scope = new AsyncResource('sched-messaging-broker');

  let blockedReason: string | undefined;
  let closing = false;
  let closed: Promise<void> | undefined;
  let failures = 0;

  const manager: AmqpConnectionManager = scope.runInAsyncScope(
    () =>
      new AmqpConnectionManagerClass(opts.url, {
        heartbeatIntervalInSeconds: opts.heartbeatSeconds ?? 10, // added to the URL unless it has one
        reconnectTimeInSeconds: initialDelayMs / 1000,
        connectionOptions: { clientProperties: { connection_name: opts.name }, timeout: 10_000 },
      }),
  );

  /**
   * The manager waits `reconnectTimeInSeconds` (a public, writable property it reads each time it
   * schedules a retry, right after emitting `connectFailed` or `disconnect`) before the next attempt:
   * set it there to the next step of the backoff. Jitter: replicas do not stampede a restarted broker.
   */
  function nextRetryMs(): number {
    const base = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(failures, 16));
    const delay = Math.round(base * (0.5 + Math.random() * 0.5));
    manager.reconnectTimeInSeconds = delay / 1000;
    return delay;
  }

  manager.on(
    'connect',
    scope.bind(() => {
      failures = 0;
      log.info('amqp connected', { target, connection_name: opts.name });
    }),
  );
  manager.on(
    'connectFailed',
    scope.bind(({ err }: { err: Error }) => {
      failures += 1;
      const delay = nextRetryMs();
      if (!closing) log.warn('amqp connect failed', { target, error: describeError(err), retry_in_ms: delay });
    }),
  );
  manager.on(
    'disconnect',
    scope.bind(({ err }: { err?: Error }) => {
      blockedReason = undefined;
      const delay = nextRetryMs();
      if (closing) return;
      log.warn('amqp connection lost; reconnecting', { target, retry_in_ms: delay, ...(err ? { error: describeError(err) } : {}) });
    }),
  );
  manager.on(
    'blocked',
    scope.bind(({ reason }: { reason: unknown }) => {
      blockedReason = String(reason);
      log.warn('rabbitmq blocked publishers', { target, reason: blockedReason });
    }),
  );
  manager.on(
    'unblocked',
    scope.bind(() => {
      blockedReason = undefined;
      log.info('rabbitmq unblocked publishers', { target });
    }),
  );

  function openChannel(spec: ChannelSpec): ManagedChannel {
    return openManagedChannel({
      manager,
      logger: log,
      scope,
      publishTimeoutMs: confirmTimeoutMs,
      reopenDelay: { initialMs: initialDelayMs, maxMs: maxDelayMs },
      ...spec,
    });
  }

  const publishing = openChannel({
    name: 'publish',
    setup: (ch) => assertBaseTopology(ch, names),
    onReady: () => events.emit('connected'),
  });

  function isConnected(): boolean {
    return !closing && manager.isConnected() && publishing.current() !== undefined;
  }

  function unavailable(): BrokerUnavailableError {
    if (closing) return new BrokerUnavailableError('broker is closing');
    if (!manager.isConnected()) return new BrokerUnavailableError(`not connected to RabbitMQ at ${target}`);
    return new BrokerUnavailableError('RabbitMQ publish channel is being reopened');
  }

  const broker: Broker = {
    name: opts.name,
    names,
    isConnected,

    async publish(envelope, routingKey = envelope.type) {
      assertEnvelope(envelope);
      // Consumers bind `<type>.#` (README "Routing keys"): a key of another shape could reach none of them.
      if (!isRoutingKeyOf(envelope.type, routingKey) || Buffer.byteLength(routingKey) > 255) {
        throw new Error(`routing key "${routingKey}" is not the event's type "${envelope.type}" or that type followed by qualifiers`);
      }
      // Fail fast: the manager would hold the message in memory until a reconnect; the outbox keeps it instead.
      if (!isConnected()) throw unavailable();
      // A blocked connection (memory or disk alarm) would hold the publish until the confirm timeout.
      if (blockedReason !== undefined) throw new BrokerUnavailableError(`RabbitMQ is blocking publishers: ${blockedReason}`);
      const occurred = Date.parse(envelope.occurred_at);
      await publishing.publish(names.events, routingKey, Buffer.from(JSON.stringify(envelope)), {
        persistent: true,
        messageId: envelope.id,
        type: envelope.type,
        contentType: 'application/json',
        appId: opts.name,
        ...(Number.isFinite(occurred) ? { timestamp: Math.floor(occurred / 1000) } : {}),
      });
    },

    async check() {
      if (!isConnected()) throw unavailable();
    },

    async waitForConnection(timeoutMs = 10_000) {
      if (isConnected()) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('connected', onConnected);
          reject(new BrokerUnavailableError(`not connected to RabbitMQ at ${target} within ${timeoutMs} ms`));
        }, timeoutMs);
        const onConnected = (): void => {
          clearTimeout(timer);
          resolve();
        };
        events.once('connected', onConnected);
      });
    },

    close() {
      closed ??= (async () => {
        closing = true;
        await Promise.allSettled([...stoppers].map((stop) => stop()));
        stoppers.clear();
        await publishing.close();
        await manager.close().catch(() => undefined);
        log.info('amqp connection closed', { target });
      })();
      return closed;
    },
  };

  internalsByBroker.set(broker, {
    logger: log,
    confirmTimeoutMs,
    connection: () => (isConnected() ? manager.connection : undefined),
    openChannel(spec) {
      if (closing) throw new BrokerUnavailableError('broker is closing');
      return openChannel(spec);
    },
    onClose(stop) {
      if (closing) throw new BrokerUnavailableError('broker is closing');
      stoppers.add(stop);
      return () => {
        stoppers.delete(stop);
      };
    },
  });

  // Keeps retrying in the background whatever the first attempt gives (a service starts during an outage).
  scope.runInAsyncScope(() => void manager.connect().catch(() => undefined));
  return broker;
}
