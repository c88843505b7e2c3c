import type { Pool } from 'pg';
import { keepInStep, type KeptInStep, type NotificationListener } from '@sched/db';
import type { Logger } from '@sched/logger';

/** Channel the triggers of migration 0002 notify on commit: a connection id, or `*` for all. */
export const CONNECTION_CHANGED_CHANNEL = 'calendar_sync_changed';

/**
 * Keeps the copies of connections and snapshots (store-cache.ts) in step with their tables on every
 * replica: each NOTIFY drops the copies of the connection it names. The cache serves only while LISTEN
 * is in place; it starts empty each time LISTEN is (re)established, since changes made meanwhile went
 * unheard.
 */
export function startCacheInvalidation(opts: { pool: Pool; cache: KeptInStep; logger: Pick<Logger, 'warn'> }): NotificationListener {
  return keepInStep(
    {
      pool: opts.pool,
      channel: CONNECTION_CHANGED_CHANNEL,
      logger: opts.logger,
      label: 'calendar-sync cache',
      meanwhile: 'reading connections and snapshots from the database',
    },
    opts.cache,
  );
}
