import type { RetentionRule } from '@sched/db';
import { idempotencyRetentionRule } from '@sched/idempotency';
import { inboxRetentionRule, outboxRetentionRule } from '@sched/messaging';
import type { BookingConfig } from '../config';
import { idempotencyKeys, inbox, outbox } from './schema';

const DAY_MS = 86_400_000;

/**
 * What booking prunes (docs/operations.md, "Retention"): expired idempotency keys, inbox rows and
 * published outbox rows. Bookings are never pruned.
 */
export function bookingRetentionRules(config: Pick<BookingConfig, 'RETENTION_INBOX_DAYS' | 'RETENTION_OUTBOX_DAYS'>): RetentionRule[] {
  return [
    idempotencyRetentionRule(idempotencyKeys),
    inboxRetentionRule(inbox, config.RETENTION_INBOX_DAYS * DAY_MS),
    outboxRetentionRule(outbox, config.RETENTION_OUTBOX_DAYS * DAY_MS),
  ];
}
