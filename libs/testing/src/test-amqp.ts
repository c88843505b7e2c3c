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

/** How many consumers RabbitMQ has on a queue (the full name, prefix included); the queue must exist. */
export async function queueConsumerCount(url: string, queue: string): Promise<number> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    const { consumerCount } = await ch.checkQueue(queue);
    await ch.close();
    return consumerCount;
  } finally {
    await conn.close();
  }
}
