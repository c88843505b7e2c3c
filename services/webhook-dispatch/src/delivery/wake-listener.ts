import type { Pool, PoolClient } from 'pg';
import type { Logger } from '@sched/logger';

const RETRY_MS = 1000;

export interface WakeListener {
  stop(): Promise<void>;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * LISTENs on a channel and calls `wake` on every NOTIFY. NOTIFY is sent on commit, so the worker
 * wakes right after new deliveries are visible, on whichever replica is listening, including a
 * different one from the replica that wrote them. While the connection is down the worker's poll
 * covers; it reconnects every second.
 */
export function startWakeListener(opts: { pool: Pool; channel: string; wake: () => void; logger: Pick<Logger, 'warn'> }): WakeListener {
  let stopped = false;
  let client: PoolClient | undefined;
  let timer: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;

  const retry = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connecting = connect();
    }, RETRY_MS);
  };

  async function connect(): Promise<void> {
    let c: PoolClient;
    try {
      c = await opts.pool.connect();
    } catch (err) {
      if (!stopped) opts.logger.warn('delivery worker cannot LISTEN; polling meanwhile', { channel: opts.channel, error: String(err) });
      return retry();
    }
    let released = false;
    const release = (err?: Error) => {
      if (released) return;
      released = true;
      if (client === c) client = undefined;
      c.release(err ?? true); // destroyed, never back in the pool: the session holds LISTEN state
    };
    const lost = (err: Error) => {
      release(err);
      if (stopped) return;
      opts.logger.warn('delivery worker LISTEN connection lost; polling meanwhile', { channel: opts.channel, error: err.message });
      retry();
    };
    c.on('error', lost);
    c.on('notification', (n) => {
      if (n.channel === opts.channel) opts.wake();
    });
    try {
      await c.query(`LISTEN ${quoteIdent(opts.channel)}`);
    } catch (err) {
      return lost(err instanceof Error ? err : new Error(String(err)));
    }
    if (stopped) return release();
    client = c;
    opts.wake(); // rows committed while nobody listened
  }

  connecting = connect();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await connecting;
      client?.release(true);
      client = undefined;
    },
  };
}
