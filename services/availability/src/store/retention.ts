import type { RetentionRule } from '@sched/db';
import { inboxRetentionRule } from '@sched/messaging';
import type { AvailabilityConfig } from '../config';
import { inbox } from './schema';

const DAY_MS = 86_400_000;

/**
 * What availability prunes (docs/operations.md, "Retention"): inbox rows only. The booked-interval
 * projection keeps its cancelled tombstones: they stop a late, older event from bringing a Booking back.
 */
export function availabilityRetentionRules(config: Pick<AvailabilityConfig, 'RETENTION_INBOX_DAYS'>): RetentionRule[] {
  return [inboxRetentionRule(inbox, config.RETENTION_INBOX_DAYS * DAY_MS)];
}
