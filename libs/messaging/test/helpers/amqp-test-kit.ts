import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import amqp, { type ChannelModel, type ConsumeMessage } from 'amqplib';
import { createLogger, type Logger } from '@sched/logger';
import { DEFAULT_RETRY_DELAYS_MS, serviceQueueNames, topologyNames } from '../../src';

export const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

export function randomPrefix(): string {
  return `t_${randomBytes(5).toString('hex')}.`;
}

/** Quiet logger; set MESSAGING_TEST_LOGS=1 to see what the library logged. */
export function testLogger(): Logger {
  const loud = process.env.MESSAGING_TEST_LOGS === '1';
  const stream = loud ? process.stderr : new Writable({ write: (_c, _e, cb) => cb() });
  return createLogger({ service: 'messaging-test', level: loud ? 'debug' : 'error', stream });
}

export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What a consumer of the events exchange sees: a private queue bound to `#`, outside the library under test. */
export interface Probe {
  messages: ConsumeMessage[];
  ids(): string[];
  close(): Promise<void>;
}

export async function openProbe(prefix: string, bindingKey = '#'): Promise<Probe> {
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const names = topologyNames(prefix);
  await ch.assertExchange(names.events, 'topic', { durable: true });
  const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true });
  await ch.bindQueue(queue, names.events, bindingKey);
  const messages: ConsumeMessage[] = [];
  await ch.consume(queue, (m) => m && messages.push(m), { noAck: true });
  return {
    messages,
    ids: () => messages.map((m) => String(m.properties.messageId)),
    close: () => conn.close(),
  };
}

/** Raw access for setting up odd cases (garbage bodies) and reading queues directly. */
export async function rawConnection(): Promise<ChannelModel> {
  return amqp.connect(AMQP_URL);
}

/** Deletes everything a test file created under its prefix. */
export async function deleteTopology(prefix: string, services: Array<{ service: string; retryDelaysMs?: readonly number[] }>): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    for (const s of services) {
      const q = serviceQueueNames(prefix, s.service, s.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS);
      for (const name of [q.queue, q.dlq, ...q.retries.map((r) => r.queue)]) await ch.deleteQueue(name);
    }
    const names = topologyNames(prefix);
    await ch.deleteExchange(names.events);
    await ch.deleteExchange(names.dlx);
  } finally {
    await conn.close();
  }
}
