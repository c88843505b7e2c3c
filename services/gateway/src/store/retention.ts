import { RATE_LIMIT_BOUNDS } from '@sched/contracts';
import type { RetentionRule } from '@sched/db';
import type { GatewayConfig } from '../config';
import { rateLimitCounters } from './schema';

/**
 * What the gateway prunes (docs/operations.md, "Retention"): rate-limit windows. A window is read only
 * until it ends, so it goes once it started longer ago than twice the longest window any key, the
 * booking page or the OAuth callback can have (2 h with the 1 h maximum of API keys). Workspaces and keys are never pruned.
 */
export function gatewayRetentionRules(
  config: Pick<GatewayConfig, 'RATE_LIMIT_WINDOW_SECONDS' | 'BOOKING_PAGE_RATE_WINDOW_SECONDS' | 'OAUTH_CALLBACK_RATE_WINDOW_SECONDS'>,
): RetentionRule[] {
  const longestWindowS = Math.max(RATE_LIMIT_BOUNDS.windowSecondsMax, config.RATE_LIMIT_WINDOW_SECONDS, config.BOOKING_PAGE_RATE_WINDOW_SECONDS, config.OAUTH_CALLBACK_RATE_WINDOW_SECONDS);
  return [{ table: rateLimitCounters, ageColumn: rateLimitCounters.windowStart, retentionMs: 2 * longestWindowS * 1000 }];
}
