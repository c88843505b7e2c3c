import type { Db } from '@sched/db';
import { runWithContext, type Logger } from '@sched/logger';
import type { BusyReader } from '../domain/busy-reader';
import { isProviderError } from '../domain/calendar-provider';
import type { Connection } from '../domain/ports';
import { claimDueConnections, releaseLease } from '../store/connection.queries';

export interface BusyRefresherOptions {
  db: Db;
  reader: BusyReader;
  logger: Pick<Logger, 'debug' | 'info' | 'warn'>;
  intervalMs: number;
  /** The freshness bound of snapshots: a snapshot half-way there is refreshed even with a long interval. */
  freshnessMs: number;
  /** Hosts whose busy times were asked for within this window are kept warm. */
  activeWindowMs: number;
  /** Longer than the slowest refresh, so a lease never runs out while its holder still works. */
  leaseMs: number;
  batchSize?: number;
  concurrency?: number;
  now?: () => Date;
}

export interface BusyRefresher {
  /** One round now (tests, and the timer). Resolves with the number of hosts refreshed or attempted. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Keeps the snapshots of active hosts fresh, so slot queries rarely wait on the provider. Each round
 * claims due hosts (lease + SKIP LOCKED: replicas split them, never refresh one twice at once) and
 * refreshes them; an unchanged calendar costs one PROPFIND (the ctag probe).
 */
export function startBusyRefresher(opts: BusyRefresherOptions): BusyRefresher {
  const now = opts.now ?? (() => new Date());
  const batchSize = opts.batchSize ?? 50;
  const concurrency = opts.concurrency ?? 4;
  // A snapshot refreshed in the previous round is due again in this one, whatever the timer jitter.
  const staleAfterMs = Math.floor(Math.min(opts.intervalMs * 0.9, opts.freshnessMs / 2));
  let running: Promise<number> | undefined;
  let stopped = false;

  async function refreshOne(conn: Connection): Promise<void> {
    await runWithContext({ workspace_id: conn.workspaceId }, async () => {
      try {
        await opts.reader.refresh(conn, now());
      } catch (err) {
        // Provider trouble is expected here and already reflected in the connection status.
        const reason = isProviderError(err) ? err.kind : 'unexpected';
        opts.logger.warn('busy snapshot refresh failed', { host_id: conn.hostId, reason, error: (err as Error).message });
      } finally {
        await releaseLease(opts.db, conn).catch(() => undefined);
      }
    });
  }

  async function round(): Promise<number> {
    const claimed = await claimDueConnections(opts.db, { activeWindowMs: opts.activeWindowMs, staleAfterMs, leaseMs: opts.leaseMs, limit: batchSize });
    const queue = [...claimed];
    await Promise.all(
      Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
        for (let conn = queue.shift(); conn; conn = queue.shift()) await refreshOne(conn);
      }),
    );
    if (claimed.length > 0) opts.logger.debug('busy snapshots refreshed', { hosts: claimed.length });
    return claimed.length;
  }

  function runOnce(): Promise<number> {
    running ??= round().finally(() => (running = undefined));
    return running;
  }

  const timer = setInterval(() => {
    if (stopped) return;
    runOnce().catch((err: unknown) => opts.logger.warn('busy refresher round failed', { error: (err as Error).message }));
  }, opts.intervalMs);
  timer.unref();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
