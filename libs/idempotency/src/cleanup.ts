import type { RetentionRule } from '@sched/db';
import type { IdempotencyTable } from './idempotency-table';

/**
 * The retention rule of an idempotency table for the service's retention job (libs/db startRetentionJob):
 * a row goes once it expired (`expires_at`, 24 h after the request by default). It spans every workspace
 * on purpose: retention is a property of the table, not of a tenant. The expiry index serves it.
 */
export function idempotencyRetentionRule(table: IdempotencyTable): RetentionRule {
  return { table, ageColumn: table.expiresAt, retentionMs: 0 };
}
