import type { Pool } from 'pg';
import { startNotificationListener, type NotificationListener } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { StoreCache } from './store-cache';

/** Channel the triggers of migration 0002 notify on commit: a connection id, or `*` for all. */
export const CONNECTION_CHANGED_CHANNEL = 'calendar_sync_changed';

/**
 * Keeps `cache` in step with the connection and snapshot tables on every replica: each NOTIFY drops
 * the copies of the connection it names. The cache serves only while LISTEN is in place; it starts
 * empty each time LISTEN is (re)established, since changes made meanwhile went unheard.
 */
export function startCacheInvalidation(opts: { pool: Pool; cache: StoreCache; logger: Pick<Logger, 'warn'> }): NotificationListener {
  return startNotificationListener({
    pool: opts.pool,
    channel: CONNECTION_CHANGED_CHANNEL,
    onNotification: (id) => (id === '*' || id === '' ? opts.cache.invalidateAll() : opts.cache.invalidate(id)),
    onListening: () => opts.cache.enable(),
    onLost: () => opts.cache.disable(),
    logger: opts.logger,
    label: 'calendar-sync cache',
    meanwhile: 'reading connections and snapshots from the database',
  });
}
