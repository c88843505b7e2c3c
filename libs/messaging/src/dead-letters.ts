import type { ConfirmChannel, GetMessage } from 'amqplib';
import { brokerInternals, BrokerUnavailableError, type Broker } from './broker';
import { publishConfirmedRoutable, republishOptions } from './confirm-publish';
import { describeError, HEADERS, headersOf, numberHeader, originalRoutingKey, stringHeader, withoutBrokerHeaders } from './message-headers';
import { serviceQueueNames } from './topology';

export interface DeadLetterSummary {
  id: string | null;
  type: string | null;
  routing_key: string;
  first_failed_at: string | null;
  last_error: string | null;
  attempts: number;
}

export interface DeadLetterReport {
  queue: string;
  /** Messages ready in the DLQ (not counting any another on-call tool holds at this moment). */
  count: number;
  /** Up to `limit` messages from the head of the queue, i.e. the longest dead. */
  oldest: DeadLetterSummary[];
}

const MAX_PEEK = 100;

async function withChannel<T>(broker: Broker, fn: (ch: ConfirmChannel) => Promise<T>): Promise<T> {
  const internals = brokerInternals(broker);
  const conn = internals.connection();
  if (!conn || !broker.isConnected()) throw new BrokerUnavailableError('not connected to RabbitMQ');
  const ch = await conn.createConfirmChannel();
  // A missing queue closes the channel with an error event; without a listener it would crash the process.
  ch.on('error', (err: unknown) => internals.logger.warn('dead-letter tool channel error', { error: describeError(err) }));
  try {
    return await fn(ch);
  } finally {
    // Closing also returns any message still held to its queue, at its old position.
    await ch.close().catch(() => undefined);
  }
}

async function checkQueue(ch: ConfirmChannel, queue: string): Promise<number> {
  try {
    return (await ch.checkQueue(queue)).messageCount;
  } catch (err) {
    throw new Error(`queue "${queue}" does not exist or cannot be read: ${describeError(err)}`);
  }
}

function summarize(m: GetMessage): DeadLetterSummary {
  const headers = headersOf(m.properties.headers);
  let id: string | null = m.properties.messageId ? String(m.properties.messageId) : null;
  if (!id) {
    try {
      const body = JSON.parse(m.content.toString('utf8')) as { id?: unknown };
      id = typeof body.id === 'string' ? body.id : null;
    } catch {
      id = null; // unparseable bodies are dead-lettered too; they just have no id
    }
  }
  return {
    id,
    type: m.properties.type ? String(m.properties.type) : null,
    routing_key: originalRoutingKey(headers, m.fields.routingKey),
    first_failed_at: stringHeader(headers, HEADERS.firstFailedAt) ?? null,
    // Messages the broker dead-lettered itself (delivery limit) carry only its reason.
    last_error: stringHeader(headers, HEADERS.lastError) ?? stringHeader(headers, 'x-first-death-reason') ?? null,
    attempts: numberHeader(headers, HEADERS.attempts),
  };
}

/**
 * Counts and peeks a service's DLQ without consuming it. Peeking is basic.get without
 * ack on a private channel, then one nack with requeue for all of them: the DLQ is a
 * classic queue, which puts requeued messages back at their old positions, and if this
 * process dies meanwhile the broker requeues them when the channel goes. While peeked,
 * those messages are invisible to a replay running at the same moment.
 */
export async function inspectDeadLetters(broker: Broker, service: string, opts: { limit?: number } = {}): Promise<DeadLetterReport> {
  const { dlq } = serviceQueueNames(broker.names.prefix, service, []);
  const limit = Math.max(0, Math.min(opts.limit ?? 10, MAX_PEEK));
  return withChannel(broker, async (ch) => {
    const count = await checkQueue(ch, dlq);
    const peeked: GetMessage[] = [];
    while (peeked.length < Math.min(limit, count)) {
      const m = await ch.get(dlq, { noAck: false });
      if (!m) break;
      peeked.push(m);
    }
    const oldest = peeked.map(summarize);
    const last = peeked[peeked.length - 1];
    if (last) ch.nack(last, true, true);
    return { queue: dlq, count, oldest };
  });
}

export interface ReplayOptions {
  /** At most this many; never more than the DLQ held when the replay started. */
  max?: number;
  onProgress?: (moved: number, total: number) => void;
}

/**
 * Moves dead letters back to the service's own queue (through the default exchange, so
 * other services never see them again) with a fresh attempt count. Each message is acked
 * in the DLQ only after the broker confirmed the copy, so a failure midway loses nothing;
 * at worst a message exists twice, and the consumer's inbox absorbs the duplicate. The
 * count is capped at the DLQ's size at the start, so messages that fail again and come
 * back during the replay are not replayed in a loop.
 */
export async function replayDeadLetters(broker: Broker, service: string, opts: ReplayOptions = {}): Promise<number> {
  const { queue, dlq } = serviceQueueNames(broker.names.prefix, service, []);
  const { confirmTimeoutMs } = brokerInternals(broker);
  return withChannel(broker, async (ch) => {
    await checkQueue(ch, queue); // a publish to a missing queue would be confirmed and dropped
    const available = await checkQueue(ch, dlq);
    const total = Math.max(0, Math.min(available, opts.max ?? available));
    let moved = 0;
    while (moved < total) {
      const m = await ch.get(dlq, { noAck: false });
      if (!m) break;
      const original = headersOf(m.properties.headers);
      const headers = withoutBrokerHeaders(original);
      delete headers[HEADERS.attempts];
      delete headers[HEADERS.lastError];
      delete headers[HEADERS.firstFailedAt];
      headers[HEADERS.originalRoutingKey] = originalRoutingKey(original, m.fields.routingKey);
      headers[HEADERS.replays] = numberHeader(original, HEADERS.replays) + 1;
      // Mandatory: should the queue vanish meanwhile, the copy comes back and the DLQ keeps the original.
      await publishConfirmedRoutable(ch, '', queue, m.content, republishOptions(m.properties, headers), confirmTimeoutMs);
      ch.ack(m);
      moved += 1;
      opts.onProgress?.(moved, total);
    }
    return moved;
  });
}
