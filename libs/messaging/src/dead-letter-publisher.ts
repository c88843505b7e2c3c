import { redactString } from '@sched/logger';
import { brokerInternals, BrokerUnavailableError, type Broker } from './broker';
import { publishConfirmedRoutable } from './confirm-publish';
import type { EventEnvelope } from './envelope';
import { HEADERS } from './message-headers';
import { serviceQueueNames } from './topology';

type Connection = NonNullable<ReturnType<ReturnType<typeof brokerInternals>['connection']>>;
type ConfirmChannel = Awaited<ReturnType<Connection['createConfirmChannel']>>;

export interface DeadLetterDetails {
  attempts: number;
  lastError: string | null;
  firstFailedAt: Date;
  /** More headers the service's own replay handling reads (e.g. a delivery id). */
  headers?: Record<string, string | number>;
}

export interface DeadLetterPublisher {
  /** Resolves once the broker confirmed the message in `<prefix><service>.dlq`. */
  publish(envelope: EventEnvelope, details: DeadLetterDetails): Promise<void>;
  close(): Promise<void>;
}

/**
 * Puts a message of a service's own making into that service's DLQ, with the headers the DLQ tools
 * read (attempts, last error, first failure, original routing key), so it lists and replays like a
 * message the consumer dead-lettered. For work that fails outside a message handler, such as a
 * webhook delivery that exhausted its schedule hours after its event was consumed.
 */
export function createDeadLetterPublisher(broker: Broker, service: string): DeadLetterPublisher {
  const internals = brokerInternals(broker);
  const queues = serviceQueueNames(broker.names.prefix, service, []);
  let channel: { conn: Connection; ch: ConfirmChannel } | undefined;

  async function open(): Promise<ConfirmChannel> {
    const conn = internals.connection();
    if (!conn || !broker.isConnected()) throw new BrokerUnavailableError('not connected to RabbitMQ');
    if (channel?.conn === conn) return channel.ch;
    const ch = await conn.createConfirmChannel();
    ch.on('error', (err: unknown) => internals.logger.warn('dead-letter publish channel error', { error: redactString(String(err)) }));
    ch.on('close', () => {
      if (channel?.ch === ch) channel = undefined;
    });
    channel = { conn, ch };
    return ch;
  }

  return {
    async publish(envelope, details) {
      const ch = await open();
      const headers = {
        [HEADERS.attempts]: details.attempts,
        [HEADERS.lastError]: redactString(details.lastError ?? 'failed').slice(0, 500),
        [HEADERS.firstFailedAt]: details.firstFailedAt.toISOString(),
        [HEADERS.originalRoutingKey]: envelope.type,
        ...details.headers,
      };
      // Mandatory: if the DLQ does not exist yet, the message comes back and the caller retries later.
      await publishConfirmedRoutable(
        ch,
        broker.names.dlx,
        queues.dlqBindingKey,
        Buffer.from(JSON.stringify(envelope)),
        {
          persistent: true,
          messageId: envelope.id,
          type: envelope.type,
          contentType: 'application/json',
          appId: service,
          timestamp: Math.floor(Date.parse(envelope.occurred_at) / 1000),
          headers,
        },
        internals.confirmTimeoutMs,
      );
    },
    async close() {
      const ch = channel?.ch;
      channel = undefined;
      await ch?.close().catch(() => undefined);
    },
  };
}
