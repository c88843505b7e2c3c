import { AsyncResource } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { sql, type SQL } from 'drizzle-orm';
import { createGroupCommit, type GroupCommit } from '@sched/group-commit';
import { currentContext, runWithContext } from '@sched/logger';
import { brokerInternals, type Broker, type MessagingLogger } from './broker';
import { publishConfirmed, republishOptions } from './confirm-publish';
import { qualifiedTableName, rowsOf, type AnyPgDatabase, type TxOf } from './db-types';
import { parseEnvelope, type EventEnvelope } from './envelope';
import type { InboxTable } from './inbox-table';
import { describeError, HEADERS, headersOf, numberHeader, originalRoutingKey, stringHeader, withoutBrokerHeaders } from './message-headers';
import { assertServiceTopology, DEFAULT_RETRY_DELAYS_MS, serviceBindingKeys, serviceQueueNames, type ServiceQueueNames } from './topology';

export interface DeliveryInfo {
  /** 1 for the first delivery, 2 for the first retry, and so on. */
  attempt: number;
  redelivered: boolean;
}

export type EventHandler<TTx> = (envelope: EventEnvelope, tx: TTx, info: DeliveryInfo) => Promise<void>;

/** The consumer's path without the inbox, for effects safe to repeat (ConsumerOptions.idempotent). */
export interface IdempotentOptions<TDb extends AnyPgDatabase> {
  accepts(envelope: EventEnvelope): boolean;
  /** One message's effects on `db`, outside any transaction. */
  handler(envelope: EventEnvelope, db: TDb, info: DeliveryInfo): Promise<void>;
  /**
   * Opt-in, the batched form (group commit, @sched/group-commit, as `batch` does for the inbox path): the
   * messages that arrive while a batch is running wait and then go to `batchHandler` together (at most
   * `prefetch`, in delivery order, never two deliveries of one event id), which applies all their effects
   * (typically one statement for all), and each is acknowledged once it resolves. No timer: a message alone
   * goes to `handler` at once. If `batchHandler` throws, each of its messages runs again through `handler`
   * alone, so only a failing one goes to the retry queues and the DLQ, as without it. So a message's effect
   * may be applied twice (once by a failed batch that got part way, once alone): safe, since it must be
   * safe to repeat anyway. It must give the state that `handler` gives for the same messages applied one by
   * one, whatever their order (e.g. several events of one entity: keep the highest version).
   */
  batchHandler?(envelopes: EventEnvelope[], db: TDb): Promise<void>;
  /** With `batchHandler`: batches running at once (default 1). */
  inFlight?: number;
}

export interface ConsumerOptions<TDb extends AnyPgDatabase> {
  broker: Broker;
  db: TDb;
  inbox: InboxTable;
  /** Names the queue `<prefix><service>` and its retry and dead-letter queues. */
  service: string;
  /**
   * Event types (topic patterns allowed, e.g. `booking.*`) the service consumes. Each is bound as
   * `<binding>.#`, so the queue receives the type's events whatever qualifiers their routing key carries
   * (`booking.created` receives `booking.created.invitation` too); a qualified binding
   * (`booking.created.invitation`) receives only those. README "Routing keys".
   */
  bindings: readonly string[];
  /**
   * Binding keys bound exactly as given, without qualifiers: for a key an older publisher still uses
   * while a rolling upgrade runs (invitation binds the bare `booking.created` that only booking
   * versions before qualified keys publish).
   */
  exactBindings?: readonly string[];
  handler: EventHandler<TxOf<TDb>>;
  /**
   * Optional filter run before any database work. A message it refuses is acknowledged at once, with
   * no transaction and no inbox row: the service has no effect to make for it, so there is nothing to
   * deduplicate (e.g. a booking.created without an invitation, for the invitation service).
   */
  accepts?: (envelope: EventEnvelope) => boolean;
  /**
   * Events whose effect is idempotent by itself (e.g. an upsert where the highest version wins: applying a
   * message twice leaves the state that applying it once does) may skip the inbox: those `accepts` takes
   * are given to `handler` with `db` itself, outside any transaction and with no inbox row, three round
   * trips fewer per message (BEGIN, the inbox insert, COMMIT). Every statement the handler runs must be
   * atomic on its own and safe to repeat; a failure goes through the retry queues like any other.
   */
  idempotent?: IdempotentOptions<TDb>;
  /** Delay before each retry; its length is the number of retries. Default [1000, 5000, 30000]. */
  retryDelaysMs?: readonly number[];
  /** Unacknowledged messages handled at once by this consumer. Default 10. */
  prefetch?: number;
  /**
   * Opt-in: messages waiting together share one transaction (group commit, @sched/group-commit): one inbox
   * insert for all, `handler` for each in turn on the same `tx`, one COMMIT, then each is acknowledged. No
   * timer: a message alone goes at once; batches (at most `prefetch` messages) form only while an earlier
   * transaction is running. If any handler throws (or the transaction fails), the batch is rolled back and
   * each of its messages runs again in a transaction of its own, so a failure affects only its own message
   * (retries and dead-lettering as without batching). So a handler may run twice for one delivery, and a
   * later message's handler sees the earlier ones' uncommitted writes: only for handlers whose every effect
   * is a statement in `tx` (no HTTP call, no in-memory state that a rolled-back batch would leave changed),
   * and which do not hold locks others wait on for long. `inFlight`: transactions at once (default 1).
   */
  batch?: boolean | { inFlight?: number };
  logger: MessagingLogger;
}

export interface Consumer {
  readonly queues: ServiceQueueNames;
  /** Resolves once the topology is asserted and the consumer is subscribed (first time only). */
  ready(timeoutMs?: number): Promise<void>;
  /** Cancels the subscription, waits for handlers in flight, closes the channel. */
  stop(): Promise<void>;
}

const REPUBLISH_FAILURE_PAUSE_MS = 1000;

/** A parsed delivery on its way into a transaction. */
interface Delivery {
  envelope: EventEnvelope;
  info: DeliveryInfo;
}

type Outcome = 'handled' | 'duplicate';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` in `envelope`'s log context: as it is when the context already names it, else in a new one. */
function inEventContext<T>(envelope: EventEnvelope, fn: () => Promise<T>): Promise<T> {
  if (currentContext().event_id === envelope.id) return fn();
  return runWithContext({ event_id: envelope.id, workspace_id: envelope.workspace_id }, fn);
}

/**
 * Competing consumer for one service queue. Each message is handled in one database
 * transaction with its inbox row (with `batch`, messages waiting together share one), so an
 * effect is committed once however often the message arrives. Failures go through the delay
 * queues, then to `<service>.dlq`.
 */
export function startConsumer<TDb extends AnyPgDatabase>(opts: ConsumerOptions<TDb>): Consumer {
  const internals = brokerInternals(opts.broker);
  const names = opts.broker.names;
  const log = opts.logger;
  const queues = serviceQueueNames(names.prefix, opts.service, opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS);
  const bindingKeys = serviceBindingKeys(opts.bindings, opts.exactBindings);
  const prefetch = opts.prefetch ?? 10;
  const inFlight = new Set<Promise<void>>();
  const events = new EventEmitter();
  events.setMaxListeners(0);
  // Deliveries arrive inside whichever handler last touched the socket: keep its event_id out.
  const scope = new AsyncResource('sched-messaging-consumer');

  /**
   * Deliveries in one transaction with their inbox rows: one insert for all (in id order, so two batches
   * never wait on each other's rows in opposite orders), then each fresh one's handler in delivery order.
   */
  async function handleInTransaction(items: Delivery[]): Promise<Outcome[]> {
    const rows = items.map((d) => ({ eventId: d.envelope.id, type: d.envelope.type }));
    if (rows.length > 1) rows.sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    return opts.db.transaction(async (tx) => {
      const inserted = rowsOf<{ event_id: string }>(await tx.execute(inboxInsert(rows)));
      const fresh = new Set(inserted.map((r) => r.event_id));
      const outcomes: Outcome[] = [];
      for (const { envelope: env, info } of items) {
        if (!fresh.has(env.id)) {
          outcomes.push('duplicate');
          continue;
        }
        // A batch runs in the context of whichever delivery started it: each handler gets its own event_id.
        await inEventContext(env, () => opts.handler(env, tx as TxOf<TDb>, info));
        outcomes.push('handled');
      }
      return outcomes;
    });
  }

  /**
   * The inbox rows' INSERT as SQL text (the table name worked out once), not built by drizzle's insert builder
   * per transaction, which cost more Node CPU than its round trip: `INSERT … VALUES … ON CONFLICT DO NOTHING
   * RETURNING event_id`, the rows already in id order. received_at takes its default.
   */
  const inboxName = sql.raw(qualifiedTableName(opts.inbox));
  function inboxInsert(rows: Array<{ eventId: string; type: string }>): SQL {
    const values = rows.length === 1 ? sql`(${rows[0]!.eventId}, ${rows[0]!.type})` : sql.join(rows.map((r) => sql`(${r.eventId}, ${r.type})`), sql`, `);
    return sql`INSERT INTO ${inboxName} (event_id, type) VALUES ${values} ON CONFLICT DO NOTHING RETURNING event_id`;
  }

  /**
   * Deliveries waiting together, handled by one `run` (at most `prefetch`); a failed batch runs its items alone.
   * A message and its redelivery never share a batch: the later one finds the inbox row committed, and a
   * batch handler sees distinct event ids.
   */
  function deliveryBatches<R>(run: (items: Delivery[]) => Promise<R[]>, inFlight: number | undefined): GroupCommit<Delivery, R> {
    return createGroupCommit<Delivery, R>({ run, maxInFlight: Math.max(1, inFlight ?? 1), maxBatch: prefetch, keyOf: (d) => d.envelope.id, retryAlone: () => true });
  }

  const batchOpts = opts.batch === true ? {} : opts.batch || undefined;
  /** With `batch`: deliveries waiting together go into one transaction. */
  const batches: GroupCommit<Delivery, Outcome> | undefined = batchOpts ? deliveryBatches(handleInTransaction, batchOpts.inFlight) : undefined;

  const idem = opts.idempotent;
  /** Runs one message through `idempotent.handler`, several through `idempotent.batchHandler`. */
  async function handleIdempotent(items: Delivery[]): Promise<void[]> {
    if (items.length === 1) {
      const { envelope, info } = items[0]!;
      // A re-run alone after a failed batch runs in that batch's context: each gets its own event_id.
      await inEventContext(envelope, () => idem!.handler(envelope, opts.db, info));
    } else {
      try {
        // One statement for several events: no single event_id applies to it.
        await runWithContext({ event_id: undefined, workspace_id: undefined }, () => idem!.batchHandler!(items.map((d) => d.envelope), opts.db));
      } catch (err) {
        log.warn('idempotent batch failed; handling its messages one by one', { queue: queues.queue, messages: items.length, error: describeError(err) });
        throw err;
      }
    }
    return items.map(() => undefined);
  }
  /** With `idempotent.batchHandler`: deliveries waiting together share one call. */
  const idempotentBatches: GroupCommit<Delivery, void> | undefined = idem?.batchHandler ? deliveryBatches(handleIdempotent, idem.inFlight) : undefined;

  async function handleOne(d: Delivery): Promise<Outcome> {
    if (batches) return batches.submit(d);
    const [outcome] = await handleInTransaction([d]);
    return outcome!;
  }

  /** The channel we are subscribed on; every delivery is settled on the channel that brought it. */
  let subscription: { ch: ConfirmChannel; consumerTag: string } | undefined;
  let settingUp: Promise<void> | undefined;
  let started = false;
  let stopping = false;
  let stopped: Promise<void> | undefined;

  /** Runs on every channel the broker opens for us (first start, each reconnect, after a cancel). Idempotent. */
  async function subscribe(ch: ConfirmChannel): Promise<void> {
    await assertServiceTopology(ch, names, queues, bindingKeys);
    await ch.prefetch(prefetch);
    if (stopping) return;
    const ok = await ch.consume(queues.queue, scope.bind((msg: ConsumeMessage | null) => onMessage(ch, msg)), { noAck: false });
    subscription = { ch, consumerTag: ok.consumerTag };
  }

  function onMessage(ch: ConfirmChannel, msg: ConsumeMessage | null): void {
    if (!msg) {
      // The broker cancelled us (queue deleted): a fresh channel re-asserts the queue.
      log.warn('consumer cancelled by the broker', { queue: queues.queue });
      ch.close().catch(() => undefined);
      return;
    }
    const work: Promise<void> = handleDelivery(ch, msg)
      .catch((err: unknown) => {
        log.error('unexpected error while handling a message', { queue: queues.queue, error: describeError(err) });
      })
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  }

  /** Never throws on a dead channel: the broker redelivers whatever was not acknowledged. */
  function settle(ch: ConfirmChannel, msg: ConsumeMessage, how: 'ack' | 'requeue'): void {
    try {
      if (how === 'ack') ch.ack(msg);
      else ch.nack(msg, false, true);
    } catch (err) {
      log.debug('could not settle message; the broker will redeliver it', { queue: queues.queue, error: describeError(err) });
    }
  }

  /** Publishes a copy (to a retry queue or the DLQ) and acks the original only once the copy is confirmed. */
  async function moveMessage(ch: ConfirmChannel, msg: ConsumeMessage, exchange: string, routingKey: string, headers: Record<string, unknown>): Promise<void> {
    try {
      await publishConfirmed(ch, exchange, routingKey, msg.content, republishOptions(msg.properties, headers), internals.confirmTimeoutMs);
    } catch (err) {
      log.error('could not move failed message; requeueing it', { queue: queues.queue, error: describeError(err) });
      await sleep(REPUBLISH_FAILURE_PAUSE_MS); // no hot loop if the broker keeps refusing
      settle(ch, msg, 'requeue');
      return;
    }
    settle(ch, msg, 'ack');
  }

  async function onFailure(
    ch: ConfirmChannel,
    msg: ConsumeMessage,
    headers: Record<string, unknown>,
    attempts: number,
    err: unknown,
    retryable = true,
  ): Promise<void> {
    const reason = describeError(err);
    const originalKey = originalRoutingKey(headers, msg.fields.routingKey);
    const next = {
      ...withoutBrokerHeaders(headers),
      [HEADERS.attempts]: attempts,
      [HEADERS.lastError]: reason,
      [HEADERS.firstFailedAt]: stringHeader(headers, HEADERS.firstFailedAt) ?? new Date().toISOString(),
      [HEADERS.originalRoutingKey]: originalKey,
    };
    const retry = retryable ? queues.retries[attempts - 1] : undefined;
    if (retry) {
      log.warn('event handler failed; retrying later', { queue: queues.queue, attempt: attempts, retry_in_ms: retry.delayMs, error: reason });
      await moveMessage(ch, msg, '', retry.queue, next);
      return;
    }
    log.error('event dead-lettered', { queue: queues.queue, dlq: queues.dlq, attempts, error: reason });
    // BCC routes the copy to this service's DLQ binding while the message keeps its original
    // routing key (the broker strips the BCC header before delivery).
    await moveMessage(ch, msg, names.dlx, originalKey, { ...next, BCC: [queues.dlqBindingKey] });
  }

  async function handleDelivery(ch: ConfirmChannel, msg: ConsumeMessage): Promise<void> {
    const headers = headersOf(msg.properties.headers);
    const attempt = numberHeader(headers, HEADERS.attempts) + 1;
    let envelope: EventEnvelope;
    try {
      envelope = parseEnvelope(msg.content);
    } catch (err) {
      // Retrying cannot fix a body that does not parse: straight to the DLQ.
      await onFailure(ch, msg, headers, attempt, err, false);
      return;
    }
    const env = envelope;
    if (opts.accepts && !opts.accepts(env)) {
      settle(ch, msg, 'ack');
      return;
    }
    await runWithContext({ event_id: env.id, workspace_id: env.workspace_id }, async () => {
      let outcome: Outcome;
      const info = { attempt, redelivered: msg.fields.redelivered };
      if (opts.idempotent?.accepts(env)) {
        try {
          if (idempotentBatches) await idempotentBatches.submit({ envelope: env, info });
          else await opts.idempotent.handler(env, opts.db, info);
        } catch (err) {
          await onFailure(ch, msg, headers, attempt, err);
          return;
        }
        log.debug('event handled', { queue: queues.queue, type: env.type, attempt });
        settle(ch, msg, 'ack');
        return;
      }
      try {
        outcome = await handleOne({ envelope: env, info });
      } catch (err) {
        await onFailure(ch, msg, headers, attempt, err);
        return;
      }
      if (outcome === 'duplicate') log.info('duplicate event skipped', { queue: queues.queue, type: env.type });
      else log.debug('event handled', { queue: queues.queue, type: env.type, attempt });
      settle(ch, msg, 'ack');
    });
  }

  const channel = internals.openChannel({
    name: queues.queue,
    setup(ch) {
      settingUp = subscribe(ch);
      return settingUp;
    },
    onReady() {
      if (stopping) return;
      started = true;
      events.emit('ready');
      log.info('consumer subscribed', { queue: queues.queue, bindings: bindingKeys, prefetch });
    },
    onLost(ch) {
      // Deliveries in flight on it will be redelivered; their settle() on the dead channel is a no-op.
      if (subscription?.ch === ch) subscription = undefined;
    },
  });

  const consumer: Consumer = {
    queues,
    async ready(timeoutMs = 10_000) {
      if (started) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('ready', onReady);
          reject(new Error(`consumer on ${queues.queue} not subscribed within ${timeoutMs} ms`));
        }, timeoutMs);
        const onReady = (): void => {
          clearTimeout(timer);
          resolve();
        };
        events.once('ready', onReady);
      });
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        unregister();
        await settingUp?.catch(() => undefined);
        const sub = subscription;
        if (sub) await sub.ch.cancel(sub.consumerTag).catch(() => undefined);
        // Deliveries already on the wire may still start handlers until the cancel is confirmed.
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        subscription = undefined;
        await channel.close();
        log.info('consumer stopped', { queue: queues.queue });
      })();
      return stopped;
    },
  };

  const unregister = internals.onClose(() => consumer.stop());
  return consumer;
}
