import { checkPostgres, createDb, createPool } from '@sched/db';
import { createLifecycle } from '@sched/lifecycle';
import { createLogger } from '@sched/logger';
import { buildGatewayApp } from './app';
import { readConfig } from './config';
import { sweepCounters } from './store/rate-limit.queries';

async function main(): Promise<void> {
  const config = readConfig();
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
  const { http, closeUpstreams } = buildGatewayApp({ config, pool, counterPool, logger, readiness: { postgres: () => checkPostgres(pool) } });
  lifecycle.onStop('upstream clients', async () => closeUpstreams());

  const db = createDb(pool);
  const sweep = setInterval(() => {
    sweepCounters(db, new Date(Date.now() - 2 * 3600 * 1000)).catch((err: unknown) => logger.warn('rate limit sweep failed', { err }));
  }, 60_000);
  sweep.unref();
  lifecycle.onStop('rate limit sweep', async () => clearInterval(sweep));

  await http.listen(config.PORT, config.HOST);
  lifecycle.onStop('http', () => http.close());
  logger.info('gateway listening', { port: config.PORT, host: config.HOST });
}

void main();
