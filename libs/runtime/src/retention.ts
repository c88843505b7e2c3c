import { startRetentionJob, type RetentionJob, type RetentionRule } from '@sched/db';
import { createRetentionMetrics } from '@sched/http';
import type { Broker } from '@sched/messaging';
import type { BaseServiceConfig, ServiceContext } from './index';

/** The settings every service with a retention job reads (retentionEnv in @sched/config). */
export interface RetentionConfig {
  RETENTION_INTERVAL_MS: number;
  RETENTION_BATCH_SIZE: number;
}

/**
 * Starts the service's retention job (libs/db startRetentionJob) on the service's pool, with the
 * `retention_rows_pruned_total{table}` counter in the service's /metrics, stopped on shutdown.
 * One per service: it owns the counter.
 */
export function startRetention<C extends BaseServiceConfig & RetentionConfig>(ctx: ServiceContext<C, Broker | undefined>, rules: readonly RetentionRule[]): RetentionJob {
  const job = startRetentionJob({
    db: ctx.db,
    rules,
    intervalMs: ctx.config.RETENTION_INTERVAL_MS,
    batchSize: ctx.config.RETENTION_BATCH_SIZE,
    logger: ctx.logger,
    metrics: createRetentionMetrics(ctx.http.registry),
  });
  ctx.onStop('retention job', () => job.stop());
  return job;
}
