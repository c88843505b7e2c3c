import type { Pool } from 'pg';
import { keepInStep, type KeptInStep, type NotificationListener } from '@sched/db';
import type { Logger } from '@sched/logger';

/** Channel the triggers of migration 0002 notify on commit: a host id, or `*` for every host. */
export const SLOTS_CHANGED_CHANNEL = 'availability_slots_changed';

/**
 * Keeps the Slots answers in step with this service's tables on every replica: each NOTIFY drops the
 * answers of the host it names. The cache serves only while LISTEN is in place; it starts empty each
 * time LISTEN is (re)established, since changes made meanwhile went unheard.
 */
export function startSlotsInvalidation(opts: { pool: Pool; cache: KeptInStep; logger: Pick<Logger, 'warn'> }): NotificationListener {
  return keepInStep({ pool: opts.pool, channel: SLOTS_CHANGED_CHANNEL, logger: opts.logger, label: 'slots cache', meanwhile: 'computing every Slots answer afresh' }, opts.cache);
}
