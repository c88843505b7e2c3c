import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { EVENTS_EXCHANGE, qualifiedBindingKey } from '@sched/messaging';
import type { TestAmqp } from '@sched/testing';

/** A test's own queue bound to the prefixed events exchange: what actually reached RabbitMQ, counted. */
export interface EventTap {
  queue: string;
  messages: Array<{ routingKey: string; body: any }>;
  /** Publishes a message as another service would (routing key = type). */
  publish(envelope: { type: string } & Record<string, unknown>): Promise<void>;
  /**
   * Sends a marker straight to the tap's queue and waits until it comes back: every message routed to
   * the queue before it (e.g. everything a relay had confirmed) has been counted by then. The marker is
   * not counted.
   */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** `bindings` name event types as a consumer's do: each is bound with its qualifiers (`<type>.#`, libs/messaging README "Routing keys"). */
export async function startEventTap(broker: TestAmqp, name: string, bindings: string[]): Promise<EventTap> {
  const conn: ChannelModel = await amqp.connect(broker.url);
  const ch: Channel = await conn.createConfirmChannel();
  const exchange = `${broker.prefix}${EVENTS_EXCHANGE}`;
  const queue = `${broker.prefix}${name}`;
  await ch.assertExchange(exchange, 'topic', { durable: true });
  await ch.assertQueue(queue, { durable: false, autoDelete: false });
  for (const key of bindings) await ch.bindQueue(queue, exchange, qualifiedBindingKey(key));
  const messages: EventTap['messages'] = [];
  const markers = new Map<string, () => void>();
  let markerCount = 0;
  await ch.consume(queue, (msg) => {
    if (!msg) return;
    const marker = markers.get(String(msg.properties.messageId));
    if (marker) {
      ch.ack(msg);
      return marker();
    }
    messages.push({ routingKey: msg.fields.routingKey, body: JSON.parse(msg.content.toString()) });
    ch.ack(msg);
  });
  return {
    queue,
    messages,
    async publish(envelope) {
      const confirm = ch as unknown as { publish: Channel['publish']; waitForConfirms(): Promise<void> };
      confirm.publish(exchange, envelope.type, Buffer.from(JSON.stringify(envelope)), { persistent: true, messageId: String(envelope.id), type: envelope.type, contentType: 'application/json' });
      await confirm.waitForConfirms();
    },
    async drain() {
      const id = `tap-marker-${++markerCount}`;
      const back = new Promise<void>((resolve) => markers.set(id, resolve));
      const confirm = ch as unknown as { sendToQueue: Channel['sendToQueue']; waitForConfirms(): Promise<void> };
      confirm.sendToQueue(queue, Buffer.from('{}'), { messageId: id });
      await confirm.waitForConfirms();
      await back;
      markers.delete(id);
    },
    async close() {
      await ch.deleteQueue(queue).catch(() => undefined);
      await conn.close().catch(() => undefined);
    },
  };
}
