import type { AsyncResource } from 'node:async_hooks';
import type { ConfirmChannel, Options } from 'amqplib';
import type { AmqpConnectionManager, Channel, ChannelWrapper } from 'amqp-connection-manager';
import type { Logger } from '@sched/logger';
import { describeError } from './message-headers';

type MessagingLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

export interface ManagedChannelOptions {
  manager: AmqpConnectionManager;
  /** For log lines: `publish`, or the queue a consumer reads. */
  name: string;
  logger: MessagingLogger;
  /** Channel events fire inside whatever handler last touched the socket: run ours in the broker's own context. */
  scope: AsyncResource;
  /** Bound on a publish through `publish()`, from the call to the broker's confirm. */
  publishTimeoutMs: number;
  /** Delay before reopening a channel the broker closed alone; doubles per failure up to `maxMs`, with jitter. */
  reopenDelay: { initialMs: number; maxMs: number };
  /**
   * Runs on every new channel, after each (re)connect and after a reopen: asserts topology, sets
   * prefetch, subscribes. If it throws, the error is logged, that channel is closed and a new one is
   * tried later (backing off), so a half-set-up channel is never used.
   */
  setup(ch: ConfirmChannel): Promise<void>;
  /** The channel is set up and usable (every time). */
  onReady?(ch: ConfirmChannel): void;
  /** The usable channel went away, with its connection or alone. */
  onLost?(ch: ConfirmChannel): void;
}

export interface ManagedChannel {
  /** The channel whose setup has completed, while it is open. */
  current(): ConfirmChannel | undefined;
  /** Resolves on the broker's confirm (through amqp-connection-manager's confirm channel). */
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<void>;
  /** Waits for outstanding confirms, then closes the channel for good. */
  close(): Promise<void>;
}

/**
 * A confirm channel kept open by amqp-connection-manager: after every reconnect it opens a new channel
 * and runs `setup` on it. The manager does not reopen a channel that the broker closed while the
 * connection stayed up (a channel error such as 404 on a deleted exchange, or our own close after a
 * failed setup or a broker-side consumer cancel): it waits for the next reconnect, which may never
 * come. That case is ours: the wrapper is replaced by a new one (public API only), after a backoff.
 */
export function openManagedChannel(opts: ManagedChannelOptions): ManagedChannel {
  const { manager, name, logger: log, scope } = opts;
  let generation = 0;
  let wrapper: ChannelWrapper;
  let usable: ConfirmChannel | undefined;
  let closing = false;
  let failures = 0;
  let reopenTimer: NodeJS.Timeout | undefined;

  function delay(): number {
    const base = Math.min(opts.reopenDelay.maxMs, opts.reopenDelay.initialMs * 2 ** Math.min(failures, 16));
    return Math.round(base * (0.5 + Math.random() * 0.5));
  }

  function create(): ChannelWrapper {
    const gen = ++generation;
    const w = manager.createChannel({
      name,
      confirm: true,
      publishTimeout: opts.publishTimeoutMs,
      setup: scope.bind((ch: Channel) => setup(gen, ch as ConfirmChannel)),
    });
    // Emitted when the manager cannot even create the channel (the connection died meanwhile): the next connect retries.
    w.on('error', scope.bind((err: unknown) => log.warn('amqp channel could not be opened', { channel: name, error: describeError(err) })));
    return w;
  }

  async function setup(gen: number, ch: ConfirmChannel): Promise<void> {
    ch.on('error', scope.bind((err: unknown) => log.warn('amqp channel error', { channel: name, error: describeError(err) })));
    ch.on('close', scope.bind(() => onChannelClosed(gen, ch)));
    try {
      await opts.setup(ch);
    } catch (err) {
      failures += 1;
      log.error('amqp channel setup failed; will retry', { channel: name, error: describeError(err) });
      // Closed before we return, so the manager never publishes on it; the close handler schedules a reopen.
      await ch.close().catch(() => undefined);
      return;
    }
    if (gen !== generation || closing) return;
    failures = 0;
    usable = ch;
    opts.onReady?.(ch);
  }

  function onChannelClosed(gen: number, ch: ConfirmChannel): void {
    if (usable === ch) {
      usable = undefined;
      opts.onLost?.(ch);
    }
    // amqplib closes every channel before it reports the connection closed: look once that has landed.
    setImmediate(() => {
      if (closing || gen !== generation || reopenTimer) return;
      if (!manager.connection) return; // the whole connection went: the manager reconnects and reopens
      const wait = delay();
      log.warn('amqp channel closed while connected; reopening', { channel: name, retry_in_ms: wait });
      reopenTimer = setTimeout(
        scope.bind(() => {
          reopenTimer = undefined;
          if (closing) return;
          const old = wrapper;
          wrapper = create();
          old.close().catch(() => undefined);
        }),
        wait,
      );
    });
  }

  wrapper = create();

  return {
    current: () => usable,
    async publish(exchange, routingKey, content, options) {
      try {
        await wrapper.publish(exchange, routingKey, content, options);
      } catch (err) {
        // amqp-connection-manager rejects with a bare "timeout" when its publishTimeout elapses.
        if (err instanceof Error && err.message === 'timeout') throw new Error(`no publisher confirm within ${opts.publishTimeoutMs} ms`);
        throw err;
      }
    },
    async close() {
      closing = true;
      if (reopenTimer) clearTimeout(reopenTimer);
      const ch = usable;
      usable = undefined;
      if (ch) await ch.waitForConfirms().catch(() => undefined);
      await wrapper.close().catch(() => undefined);
    },
  };
}
