import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { Logger } from '@sched/logger';
import { DEFAULT_CONFIRM_TIMEOUT_MS, publishConfirmed } from './confirm-publish';
import { assertEnvelope, type EventEnvelope } from './envelope';
import { describeError } from './message-headers';
import { assertBaseTopology, topologyNames, type TopologyNames } from './topology';

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
  /** Publishes to `scheduling.events` with routing key = type; resolves on the broker's confirm, rejects at once while disconnected. */
  publish(envelope: EventEnvelope): Promise<void>;
  isConnected(): boolean;
  /** Readiness: resolves when connected with an open channel, else rejects with BrokerUnavailableError. */
  check(): Promise<void>;
  waitForConnection(timeoutMs?: number): Promise<void>;
  /** Stops consumers (waiting for their in-flight handlers), then closes the channel and connection. */
  close(): Promise<void>;
}

/** Something living on the broker's connection that must be rebuilt after each reconnect (a consumer). */
export interface ConnectionAttachment {
  attach(conn: ChannelModel): Promise<void>;
  /** The connection is gone: its channels are dead, deliveries in flight will be redelivered. */
  detach(): void;
  stop(): Promise<void>;
}

export interface BrokerInternals {
  logger: MessagingLogger;
  confirmTimeoutMs: number;
  connection(): ChannelModel | undefined;
  register(attachment: ConnectionAttachment): () => void;
}

// Kept off the public Broker type: consumers and the dead-letter tools need the raw connection, services do not.
const internalsByBroker = new WeakMap<Broker, BrokerInternals>();

export function brokerInternals(broker: Broker): BrokerInternals {
  const internals = internalsByBroker.get(broker);
  if (!internals) throw new Error('Not a broker made by createBroker');
  return internals;
}

function withHeartbeat(url: string, seconds: number): string {
  const u = new URL(url);
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', String(seconds));
  return u.toString();
}

function safeTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname || '/'}`;
  } catch {
    return '(unparsable AMQP URL)';
  }
}

export function createBroker(opts: BrokerOptions): Broker {
  const names = topologyNames(opts.prefix ?? '');
  const log = opts.logger;
  const url = withHeartbeat(opts.url, opts.heartbeatSeconds ?? 10);
  const target = safeTarget(opts.url);
  const initialDelayMs = opts.reconnect?.initialDelayMs ?? 200;
  const maxDelayMs = opts.reconnect?.maxDelayMs ?? 15_000;
  const confirmTimeoutMs = opts.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const attachments = new Set<ConnectionAttachment>();
  // A dropped socket is noticed inside whatever handler last wrote to it; without this its
  // log lines and the reconnect loop would carry that unrelated event_id forever.
  const scope = new AsyncResource('sched-messaging-broker');

  let conn: ChannelModel | undefined; // set only once topology is asserted
  let pub: ConfirmChannel | undefined;
  let blockedReason: string | undefined;
  let closing = false;
  let closed: Promise<void> | undefined;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let reopenTimer: NodeJS.Timeout | undefined;

  function backoff(): number {
    const base = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(failures, 16));
    return Math.round(base * (0.5 + Math.random() * 0.5)); // jitter: replicas do not stampede a restarted broker
  }

  function scheduleConnect(delayMs: number): void {
    if (closing || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void connect();
    }, delayMs);
  }

  function attachSafely(a: ConnectionAttachment, c: ChannelModel): void {
    a.attach(c).catch((err: unknown) => log.error('amqp attachment failed to start', { error: describeError(err) }));
  }

  function onPublishChannelClosed(ch: ConfirmChannel, c: ChannelModel): void {
    if (pub !== ch) return;
    pub = undefined;
    // A channel-level error (e.g. someone deleted the exchange) closes only the channel:
    // open a new one. When the whole connection is going, onConnectionClosed cancels this.
    if (closing || conn !== c) return;
    reopenTimer = setTimeout(() => {
      reopenTimer = undefined;
      openPublishChannel(c).catch((err: unknown) => {
        log.warn('amqp publish channel could not be reopened; reconnecting', { error: describeError(err) });
        c.close().catch(() => undefined);
      });
    }, initialDelayMs);
  }

  async function openPublishChannel(c: ChannelModel): Promise<void> {
    const ch = await c.createConfirmChannel();
    ch.on('error', scope.bind((err: unknown) => log.warn('amqp publish channel error', { error: describeError(err) })));
    ch.on('close', scope.bind(() => onPublishChannelClosed(ch, c)));
    await assertBaseTopology(ch, names);
    pub = ch;
  }

  function onConnectionClosed(c: ChannelModel): void {
    if (conn !== c) return;
    conn = undefined;
    pub = undefined;
    blockedReason = undefined;
    if (reopenTimer) clearTimeout(reopenTimer);
    reopenTimer = undefined;
    for (const a of attachments) a.detach();
    if (closing) return;
    const delay = backoff();
    log.warn('amqp connection lost; reconnecting', { target, retry_in_ms: delay });
    scheduleConnect(delay);
  }

  async function connect(): Promise<void> {
    let c: ChannelModel | undefined;
    try {
      c = await amqp.connect(url, { clientProperties: { connection_name: opts.name }, timeout: 10_000 });
      const model = c;
      model.on('error', scope.bind((err: unknown) => log.warn('amqp connection error', { target, error: describeError(err) })));
      model.on('close', scope.bind(() => onConnectionClosed(model)));
      model.on(
        'blocked',
        scope.bind((reason: unknown) => {
          blockedReason = String(reason);
          log.warn('rabbitmq blocked publishers', { target, reason: blockedReason });
        }),
      );
      model.on(
        'unblocked',
        scope.bind(() => {
          blockedReason = undefined;
          log.info('rabbitmq unblocked publishers', { target });
        }),
      );
      if (closing) {
        await model.close();
        return;
      }
      await openPublishChannel(model);
      conn = model;
      failures = 0;
      log.info('amqp connected', { target, connection_name: opts.name });
      events.emit('connected');
      for (const a of attachments) attachSafely(a, model);
    } catch (err) {
      failures += 1;
      if (c) c.close().catch(() => undefined);
      if (closing) return;
      const delay = backoff();
      log.warn('amqp connect failed', { target, error: describeError(err), retry_in_ms: delay });
      scheduleConnect(delay);
    }
  }

  function isConnected(): boolean {
    return conn !== undefined && pub !== undefined && !closing;
  }

  function unavailable(): BrokerUnavailableError {
    if (closing) return new BrokerUnavailableError('broker is closing');
    if (!conn) return new BrokerUnavailableError(`not connected to RabbitMQ at ${target}`);
    return new BrokerUnavailableError('RabbitMQ publish channel is being reopened');
  }

  const broker: Broker = {
    name: opts.name,
    names,
    isConnected,

    async publish(envelope) {
      assertEnvelope(envelope);
      const ch = pub;
      if (!ch || !isConnected()) throw unavailable();
      // A blocked connection (memory or disk alarm) would hold the publish until the confirm timeout.
      if (blockedReason !== undefined) throw new BrokerUnavailableError(`RabbitMQ is blocking publishers: ${blockedReason}`);
      const occurred = Date.parse(envelope.occurred_at);
      await publishConfirmed(
        ch,
        names.events,
        envelope.type,
        Buffer.from(JSON.stringify(envelope)),
        {
          persistent: true,
          messageId: envelope.id,
          type: envelope.type,
          contentType: 'application/json',
          appId: opts.name,
          ...(Number.isFinite(occurred) ? { timestamp: Math.floor(occurred / 1000) } : {}),
        },
        confirmTimeoutMs,
      );
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
        if (reconnectTimer) clearTimeout(reconnectTimer);
        if (reopenTimer) clearTimeout(reopenTimer);
        await Promise.allSettled([...attachments].map((a) => a.stop()));
        attachments.clear();
        const ch = pub;
        const c = conn;
        pub = undefined;
        conn = undefined;
        if (ch) {
          await ch.waitForConfirms().catch(() => undefined);
          await ch.close().catch(() => undefined);
        }
        if (c) await c.close().catch(() => undefined);
        log.info('amqp connection closed', { target });
      })();
      return closed;
    },
  };

  internalsByBroker.set(broker, {
    logger: log,
    confirmTimeoutMs,
    connection: () => (closing ? undefined : conn),
    register(attachment) {
      if (closing) throw new BrokerUnavailableError('broker is closing');
      attachments.add(attachment);
      if (conn) attachSafely(attachment, conn);
      return () => {
        attachments.delete(attachment);
      };
    },
  });

  scope.runInAsyncScope(() => void connect());
  return broker;
}
