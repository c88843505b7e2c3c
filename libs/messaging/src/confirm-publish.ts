import type { ConfirmChannel, MessageProperties, Options } from 'amqplib';

export const DEFAULT_CONFIRM_TIMEOUT_MS = 10_000;

/**
 * Publishes and resolves when the broker confirms. amqplib fails the callback when the
 * channel closes, but a blocked or wedged connection may never answer, hence the timeout;
 * after a timeout the message may still arrive (at-least-once, consumers deduplicate).
 */
export function publishConfirmed(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  options: Options.Publish,
  timeoutMs = DEFAULT_CONFIRM_TIMEOUT_MS,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(new Error(`no publisher confirm within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve();
    };
    try {
      ch.publish(exchange, routingKey, content, options, (err) => done(err));
    } catch (err) {
      // amqplib throws synchronously when the channel is already closed.
      done(err ?? new Error('publish failed'));
    }
  });
}

/**
 * Like publishConfirmed with `mandatory`: a message the broker could not route to any
 * queue comes back as basic.return before its confirm, and counts as a failure. Only for
 * channels that publish one message at a time (replay), where a return is unambiguous.
 */
export async function publishConfirmedRoutable(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  options: Options.Publish,
  timeoutMs = DEFAULT_CONFIRM_TIMEOUT_MS,
): Promise<void> {
  let returned = false;
  const onReturn = (): void => {
    returned = true;
  };
  ch.on('return', onReturn);
  try {
    await publishConfirmed(ch, exchange, routingKey, content, { ...options, mandatory: true }, timeoutMs);
  } finally {
    ch.off('return', onReturn);
  }
  if (returned) throw new Error(`message was unroutable: no queue for "${routingKey}" on exchange "${exchange || '(default)'}"`);
}

/** The properties worth keeping when a consumed message is published again (retry, DLQ, replay). */
export function republishOptions(props: MessageProperties, headers: Record<string, unknown>): Options.Publish {
  const opts: Options.Publish = { persistent: true, headers };
  if (props.messageId) opts.messageId = String(props.messageId);
  if (props.type) opts.type = String(props.type);
  if (props.contentType) opts.contentType = String(props.contentType);
  if (props.contentEncoding) opts.contentEncoding = String(props.contentEncoding);
  if (props.timestamp) opts.timestamp = Number(props.timestamp);
  if (props.appId) opts.appId = String(props.appId);
  if (props.correlationId) opts.correlationId = String(props.correlationId);
  return opts;
}
