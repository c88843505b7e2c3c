import type { Pool } from 'pg';
import { startNotificationListener, type NotificationListener } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { SlotsCache } from '../domain/slots-cache';

/** Channel the triggers of migration 0002 notify on commit: a host id, or `*` for every host. */
export const SLOTS_CHANGED_CHANNEL = 'availability_slots_changed';

/**
 * Keeps `cache` in step with this service's tables on every replica: each NOTIFY drops the answers of
 * the host it names. The cache serves only while LISTEN is in place; it starts empty each time LISTEN
 * is (re)established, since changes made meanwhile went unheard.
 */
export function startSlotsInvalidation(opts: { pool: Pool; cache: SlotsCache; logger: Pick<Logger, 'warn'>; now?: () => number }): NotificationListener {
  const now = opts.now ?? Date.now;
  return startNotificationListener({
    pool: opts.pool,
    channel: SLOTS_CHANGED_CHANNEL,
    onNotification: (hostId) => (hostId === '*' || hostId === '' ? opts.cache.invalidateAll() : opts.cache.invalidateHost(hostId, now())),
    onListening: () => opts.cache.enable(),
    onLost: () => opts.cache.disable(),
    logger: opts.logger,
  });
}
