import { checkPostgres, createDb, createPool, startRetentionJob } from '@sched/db';
import { createRetentionMetrics } from '@sched/http';
import { createLifecycle } from '@sched/lifecycle';
import { createLogger } from '@sched/logger';
import { buildGatewayApp } from './app';
import { opsPortOf, readConfig } from './config';
import { gatewayRetentionRules } from './store/retention';

async function main(): Promise<void> {
  const config = readConfig();
  const opsPort = opsPortOf(config);
  const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
  const lifecycle = createLifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
  lifecycle.installSignalHandlers();

  const pool = createPool(config.DATABASE_URL, { applicationName: 'gateway', logger });
  lifecycle.onStop('postgres', () => pool.end());
  // Counter upserts (one in flight per key and window, batching the requests that arrive meanwhile)
  // commit without waiting for the WAL flush. Losing a few increments in a crash only loosens one window.
  const counterPool = createPool(config.DATABASE_URL, { applicationName: 'gateway-counters', logger, asyncCommit: true, max: 5 });
  lifecycle.onStop('postgres counters', () => counterPool.end());

  // The gateway owns no queue: readiness is its own database (services report their broker themselves).
  const { http, closeUpstreams } = await buildGatewayApp({ config, pool, counterPool, logger, readiness: { postgres: () => checkPostgres(pool) } });
  lifecycle.onStop('upstream clients', async () => closeUpstreams());

  // Old rate-limit windows go in bounded batches; safe with every replica running it (libs/db retention).
  const retention = startRetentionJob({
    db: createDb(pool),
    rules: gatewayRetentionRules(config),
    intervalMs: config.RETENTION_INTERVAL_MS,
    batchSize: config.RETENTION_BATCH_SIZE,
    logger,
    metrics: createRetentionMetrics(http.registry),
  });
  lifecycle.onStop('retention job', () => retention.stop());

  await http.listen(config.PORT, config.HOST);
  lifecycle.onStop('http', () => http.close());
  // Probes and the scrape (deploy/README.md, "Network"); listening after the public port, so ready means serving.
  await http.listenOps(opsPort, config.HOST);
  logger.info('gateway listening', { port: config.PORT, ops_port: opsPort, host: config.HOST });
}

void main();
