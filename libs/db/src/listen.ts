import type { Pool, PoolClient } from 'pg';
import { quoteIdent } from './services';

const DEFAULT_RETRY_MS = 1000;

export interface NotificationListenerOptions {
  /** The LISTEN connection is taken from this pool and held for the listener's lifetime. */
  pool: Pool;
  channel: string;
  /** Every NOTIFY on the channel, with its payload ('' when none). */
  onNotification(payload: string): void;
  /**
   * LISTEN is in place, first time or after a reconnect. Notifications sent while nobody listened are
   * lost, so callers treat this as "anything may have changed".
   */
  onListening?(): void;
  /** The LISTEN connection broke; notifications are missed until onListening is called again. */
  onLost?(): void;
  logger: { warn(message: string, meta?: Record<string, unknown>): void };
  /** Pause before reconnecting. Default 1000 ms. */
  retryMs?: number;
  /** Who listens, at the start of its warnings (e.g. `delivery worker`). */
  label?: string;
  /** What the caller does while LISTEN is down, at the end of its warnings. Default `reconnecting`. */
  meanwhile?: string;
}

export interface NotificationListener {
  /** True while LISTEN is in place. */
  isListening(): boolean;
  stop(): Promise<void>;
}

/**
 * LISTENs on a Postgres channel for the caller's lifetime and reconnects every `retryMs` when the
 * connection breaks. NOTIFY is delivered on commit, so a notification always follows the write it
 * announces, on every replica listening.
 */
export function startNotificationListener(opts: NotificationListenerOptions): NotificationListener {
  const retryMs = opts.retryMs ?? DEFAULT_RETRY_MS;
  const who = opts.label ? `${opts.label} ` : '';
  const meanwhile = opts.meanwhile ?? 'reconnecting';
  let stopped = false;
  /** The connection holding LISTEN, with the one way to let it go. */
  let current: { client: PoolClient; release: (err?: Error) => void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;

  const retry = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connecting = connect();
    }, retryMs);
  };

  async function connect(): Promise<void> {
    let c: PoolClient;
    try {
      c = await opts.pool.connect();
    } catch (err) {
      if (!stopped) opts.logger.warn(`${who}cannot LISTEN; ${opts.meanwhile ?? 'retrying'}`, { channel: opts.channel, error: String(err) });
      return retry();
    }
    let released = false;
    const release = (err?: Error) => {
      if (released) return;
      released = true;
      const wasListening = current?.client === c;
      if (wasListening) current = undefined;
      c.release(err ?? true); // destroyed, never back in the pool: the session holds LISTEN state
      if (wasListening && !stopped) opts.onLost?.();
    };
    // A broken connection reports 'error' and then 'end' (or only 'end'): handled once.
    const lost = (err: Error) => {
      if (released) return;
      release(err);
      if (stopped) return;
      opts.logger.warn(`${who}LISTEN connection lost; ${meanwhile}`, { channel: opts.channel, error: err.message });
      retry();
    };
    c.on('error', lost);
    c.on('end', () => lost(new Error('connection ended')));
    c.on('notification', (n) => {
      if (n.channel === opts.channel) opts.onNotification(n.payload ?? '');
    });
    try {
      await c.query(`LISTEN ${quoteIdent(opts.channel)}`);
    } catch (err) {
      return lost(err instanceof Error ? err : new Error(String(err)));
    }
    if (stopped) return release();
    current = { client: c, release };
    opts.onListening?.();
  }

  connecting = connect();
  return {
    isListening: () => current !== undefined,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await connecting;
      current?.release();
    },
  };
}
