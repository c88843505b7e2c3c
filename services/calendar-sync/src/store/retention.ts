import type { RetentionRule } from '@sched/db';
import { inboxRetentionRule, outboxRetentionRule } from '@sched/messaging';
import type { CalendarSyncConfig } from '../config';
import { inbox, oauthStates, outbox } from './schema';

const DAY_MS = 86_400_000;

/**
 * What calendar-sync prunes (docs/operations.md, "Retention"): inbox and published outbox rows. Its other
 * tables hold current state (connections, snapshots, one sync row per Booking, kept for resync), except
 * OAuth states: a started connect flow goes once its 10 minutes have passed (used or not).
 */
export function calendarSyncRetentionRules(config: Pick<CalendarSyncConfig, 'RETENTION_INBOX_DAYS' | 'RETENTION_OUTBOX_DAYS'>): RetentionRule[] {
  return [
    inboxRetentionRule(inbox, config.RETENTION_INBOX_DAYS * DAY_MS),
    outboxRetentionRule(outbox, config.RETENTION_OUTBOX_DAYS * DAY_MS),
    { table: oauthStates, ageColumn: oauthStates.expiresAt, retentionMs: 0 },
  ];
}
