import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { testAmqpUrl } from './test-env';

export interface TestAmqp {
  url: string;
  /** Put in front of every exchange and queue name (AMQP_PREFIX), so test files share the broker without sharing topology. */
  prefix: string;
}

export function testAmqp(): TestAmqp {
  return { url: testAmqpUrl(), prefix: `t_${randomBytes(6).toString('hex')}.` };
}

/**
 * Deletes the queues and exchanges a test made. The management API is not assumed, so
 * names cannot be listed by prefix; pass them, with or without the prefix. Names that do
 * not exist are fine (RabbitMQ treats those deletes as done).
 */
export async function cleanupAmqpPrefix(url: string, prefix: string, queueNames: readonly string[], exchangeNames: readonly string[] = []): Promise<void> {
  if (!prefix) throw new Error('cleanupAmqpPrefix needs a non-empty prefix, or it could delete shared topology');
  const full = (n: string) => (n.startsWith(prefix) ? n : `${prefix}${n}`);
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    for (const q of queueNames) await ch.deleteQueue(full(q));
    for (const x of exchangeNames) await ch.deleteExchange(full(x));
    await ch.close();
  } finally {
    await conn.close();
  }
}

/** RabbitMQ's counts of a queue (a passive declare; the full name, prefix included; the queue must exist). */
async function checkQueue(url: string, queue: string): Promise<{ messageCount: number; consumerCount: number }> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    const { messageCount, consumerCount } = await ch.checkQueue(queue);
    await ch.close();
    return { messageCount, consumerCount };
  } finally {
    await conn.close();
  }
}

/** Messages ready in a queue, without touching them. */
export async function queuedCount(url: string, queue: string): Promise<number> {
  return (await checkQueue(url, queue)).messageCount;
}

/** How many consumers RabbitMQ has on a queue. */
export async function queueConsumerCount(url: string, queue: string): Promise<number> {
  return (await checkQueue(url, queue)).consumerCount;
}

/** Takes every message ready in a queue off it (basic.get with auto-ack): the message id and routing key of each, in queue order. */
export async function takeQueued(url: string, queue: string): Promise<Array<{ messageId: string; routingKey: string }>> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    const out: Array<{ messageId: string; routingKey: string }> = [];
    for (;;) {
      const m = await ch.get(queue, { noAck: true });
      if (!m) return out;
      out.push({ messageId: String(m.properties.messageId), routingKey: m.fields.routingKey });
    }
  } finally {
    await conn.close();
  }
}
