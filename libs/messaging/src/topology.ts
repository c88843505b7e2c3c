import type { Channel } from 'amqplib';

export const EVENTS_EXCHANGE = 'scheduling.events';
export const DEAD_LETTER_EXCHANGE = 'scheduling.dlx';
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1000, 5000, 30000];

/**
 * Safety net for messages that never reach our own retry logic, e.g. one that crashes
 * the process every time: after this many redeliveries the quorum queue dead-letters
 * it to the DLQ instead of looping forever. Normal retries do not count (they ack the
 * original and publish a copy), only deliveries lost to crashes or dropped connections.
 */
const DELIVERY_LIMIT = 20;

export interface TopologyNames {
  prefix: string;
  /** Durable topic exchange every service publishes its events to. */
  events: string;
  /** Direct exchange in front of the `<service>.dlq` queues. */
  dlx: string;
}

export interface ServiceQueueNames {
  /** The service's durable quorum queue, bound to the routing keys it consumes. */
  queue: string;
  /** Classic queue: peeking with basic.get + requeue keeps its order, a quorum queue would move peeked messages to the back. */
  dlq: string;
  /** Binding key of the DLQ on the dead-letter exchange (the service queue's name). */
  dlqBindingKey: string;
  /** One queue per distinct delay, in the order attempts use them. */
  retries: Array<{ queue: string; delayMs: number }>;
}

/**
 * Routing keys on `scheduling.events`: the event's `type`, optionally followed by qualifiers the publisher
 * adds so consumers can select fewer events of a type (`booking.created.invitation`). The envelope's
 * `type` never carries them. A routing key is `type` itself or starts with `type.`.
 */
export function isRoutingKeyOf(type: string, routingKey: string): boolean {
  return routingKey === type || routingKey.startsWith(`${type}.`);
}

/**
 * The binding key of a consumer's binding: the event type (or pattern) followed by `.#`, which in a topic
 * exchange matches the type itself and the type followed by any qualifiers (`#` matches zero or more
 * words). Binding a type therefore receives every event of it, whatever qualifiers its publisher adds
 * now or later. A binding that already ends in `#` is taken as it is.
 */
export function qualifiedBindingKey(binding: string): string {
  return binding === '#' || binding.endsWith('.#') ? binding : `${binding}.#`;
}

/** Every binding key of a service queue: `bindings` with their qualifiers (qualifiedBindingKey), `exactBindings` as they are. */
export function serviceBindingKeys(bindings: readonly string[], exactBindings: readonly string[] = []): string[] {
  return [...new Set([...bindings.map(qualifiedBindingKey), ...exactBindings])];
}

export function topologyNames(prefix = ''): TopologyNames {
  return { prefix, events: `${prefix}${EVENTS_EXCHANGE}`, dlx: `${prefix}${DEAD_LETTER_EXCHANGE}` };
}

/**
 * Retry queues are named by their delay rather than by attempt number: queue arguments
 * such as x-message-ttl cannot change once a queue exists, so changing the configured
 * delays must create new queues, not fail the next deploy with PRECONDITION_FAILED.
 */
export function serviceQueueNames(prefix: string, service: string, retryDelaysMs: readonly number[]): ServiceQueueNames {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(service)) throw new Error(`Invalid service name "${service}" for a queue`);
  for (const d of retryDelaysMs) {
    if (!Number.isInteger(d) || d < 1) throw new Error(`Retry delays must be positive integers of milliseconds, got ${d}`);
  }
  const queue = `${prefix}${service}`;
  return {
    queue,
    dlq: `${queue}.dlq`,
    dlqBindingKey: queue,
    retries: retryDelaysMs.map((delayMs) => ({ queue: `${queue}.retry.${delayMs}ms`, delayMs })),
  };
}

export async function assertBaseTopology(ch: Channel, names: TopologyNames): Promise<void> {
  await ch.assertExchange(names.events, 'topic', { durable: true });
  await ch.assertExchange(names.dlx, 'direct', { durable: true });
}

/**
 * Idempotent: run on every (re)connect so a deleted queue or binding comes back. `bindings` are the binding
 * keys exactly as they go to the broker (serviceBindingKeys). It only adds bindings: one a former version
 * made stays on the queue until removed by hand (a message matching several bindings of a queue reaches
 * it once).
 */
export async function assertServiceTopology(
  ch: Channel,
  names: TopologyNames,
  queues: ServiceQueueNames,
  bindings: readonly string[],
): Promise<void> {
  await assertBaseTopology(ch, names);
  await ch.assertQueue(queues.queue, {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-dead-letter-exchange': names.dlx,
      'x-dead-letter-routing-key': queues.dlqBindingKey,
      'x-delivery-limit': DELIVERY_LIMIT,
    },
  });
  for (const key of bindings) await ch.bindQueue(queues.queue, names.events, key);

  await ch.assertQueue(queues.dlq, { durable: true });
  await ch.bindQueue(queues.dlq, names.dlx, queues.dlqBindingKey);

  // A retry queue has no consumer: the message waits out the TTL, then the broker
  // dead-letters it through the default exchange to this service's queue only, so
  // other services bound to the same routing key never see the retry.
  for (const r of new Map(queues.retries.map((x) => [x.queue, x])).values()) {
    await ch.assertQueue(r.queue, {
      durable: true,
      arguments: { 'x-message-ttl': r.delayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queues.queue },
    });
  }
}
