import { sql } from 'drizzle-orm';
import type { RetentionRule } from '@sched/db';
import { inboxRetentionRule } from '@sched/messaging';
import type { WebhookDispatchConfig } from '../config';
import { attempts, deliveries, inbox } from './schema';

const DAY_MS = 86_400_000;

/** A delivery's attempts go with it, in the same statement (and are counted as `attempts`). */
const withAttempts = [{ table: attempts, column: attempts.deliveryId }] as const;

/**
 * What webhook-dispatch prunes (docs/operations.md, "Retention"), each from the moment the row last finished:
 * - succeeded deliveries `RETENTION_DELIVERIES_DAYS` after they succeeded (a replay that succeeded included);
 * - failed deliveries (dead-lettered, or stopped because their endpoint was disabled: both can still be
 *   replayed) `RETENTION_DEAD_LETTERS_DAYS` after they failed, and never while their DLQ message is still
 *   owed to the broker. A replay makes the delivery pending again, so its clock restarts when it finishes;
 * - inbox rows `RETENTION_INBOX_DAYS` after the event was handled.
 * Pending deliveries (queued, retrying or in flight) are never pruned, however old. Endpoints are not
 * pruned: they are configuration.
 */
export function webhookDispatchRetentionRules(
  config: Pick<WebhookDispatchConfig, 'RETENTION_INBOX_DAYS' | 'RETENTION_DELIVERIES_DAYS' | 'RETENTION_DEAD_LETTERS_DAYS'>,
): RetentionRule[] {
  return [
    inboxRetentionRule(inbox, config.RETENTION_INBOX_DAYS * DAY_MS),
    {
      table: deliveries,
      ageColumn: deliveries.succeededAt,
      retentionMs: config.RETENTION_DELIVERIES_DAYS * DAY_MS,
      where: sql`status = 'succeeded'`,
      children: withAttempts,
    },
    {
      table: deliveries,
      ageColumn: deliveries.failedAt,
      retentionMs: config.RETENTION_DEAD_LETTERS_DAYS * DAY_MS,
      where: sql`status = 'failed' AND NOT dead_letter_pending`,
      children: withAttempts,
    },
  ];
}
