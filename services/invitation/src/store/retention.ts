import type { RetentionRule } from '@sched/db';
import { idempotencyRetentionRule } from '@sched/idempotency';
import { inboxRetentionRule, outboxRetentionRule } from '@sched/messaging';
import type { InvitationConfig } from '../config';
import { idempotencyKeys, inbox, outbox } from './schema';

const DAY_MS = 86_400_000;

/**
 * What invitation prunes (docs/operations.md, "Retention"): expired idempotency keys, inbox rows and
 * published outbox rows. Invitations and use reservations are never pruned: use counts depend on them.
 */
export function invitationRetentionRules(config: Pick<InvitationConfig, 'RETENTION_INBOX_DAYS' | 'RETENTION_OUTBOX_DAYS'>): RetentionRule[] {
  return [
    idempotencyRetentionRule(idempotencyKeys),
    inboxRetentionRule(inbox, config.RETENTION_INBOX_DAYS * DAY_MS),
    outboxRetentionRule(outbox, config.RETENTION_OUTBOX_DAYS * DAY_MS),
  ];
}
