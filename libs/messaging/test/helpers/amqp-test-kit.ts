import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import amqp, { type ChannelModel, type ConsumeMessage } from 'amqplib';
import { createLogger, type Logger } from '@sched/logger';
import { DEFAULT_RETRY_DELAYS_MS, serviceQueueNames, topologyNames } from '../../src';
import { waitFor } from '../../../testing/src/wait-for';

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

/**
 * A logger at debug level whose JSON lines land in `lines`, for waiting on the consumer's own
 * signals ('event handled', 'duplicate event skipped') with waitForLog / waitForEventsHandled.
 * MESSAGING_TEST_LOGS=1 also echoes them to stderr.
 */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const loud = process.env.MESSAGING_TEST_LOGS === '1';
  const stream = new Writable({
    write: (chunk: Buffer | string, _e, cb) => {
      const text = chunk.toString();
      lines.push(text);
      if (loud) process.stderr.write(text);
      cb();
    },
  });
  return { logger: createLogger({ service: 'messaging-test', level: 'debug', stream }), lines };
}

/** waitFor (libs/testing) with a description of what was awaited in its timeout error; polls every 10 ms. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  try {
    await waitFor(check, { timeoutMs, intervalMs: 10 });
  } catch (err) {
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: err });
  }
}

/** Deliberate slowness of a handler under test (input, not a wait). */
export const work = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
