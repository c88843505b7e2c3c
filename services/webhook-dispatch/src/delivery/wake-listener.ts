import type { Pool } from 'pg';
import { startNotificationListener } from '@sched/db';
import type { Logger } from '@sched/logger';

export interface WakeListener {
  stop(): Promise<void>;
}

/**
 * LISTENs on a channel and calls `wake` on every NOTIFY. NOTIFY is sent on commit, so the worker
 * wakes right after new deliveries are visible, on whichever replica is listening, including a
 * different one from the replica that wrote them. While the connection is down the worker's poll
 * covers; it reconnects every second and wakes once LISTEN is back, for rows committed meanwhile.
 */
export function startWakeListener(opts: { pool: Pool; channel: string; wake: () => void; logger: Pick<Logger, 'warn'> }): WakeListener {
  return startNotificationListener({
    pool: opts.pool,
    channel: opts.channel,
    onNotification: () => opts.wake(),
    onListening: () => opts.wake(),
    logger: opts.logger,
    label: 'delivery worker',
    meanwhile: 'polling meanwhile',
  });
}
