import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '@sched/logger';
import { sendData } from './envelope';

/**
 * A check is critical unless given as `{ check, critical: false }`: a failing non-critical check is
 * reported (`degraded`) but leaves the service ready. The booking path uses that for RabbitMQ, since
 * a broker outage must delay events, never bookings (architecture.md).
 */
export type ReadinessCheck = (() => Promise<unknown>) | { check: () => Promise<unknown>; critical: false };
export type ReadinessChecks = Record<string, ReadinessCheck>;
type CheckStatus = 'ok' | 'failed' | 'timeout' | 'degraded';

export const READINESS_TIMEOUT_MS = 2000;

class CheckTimeout extends Error {}

async function runCheck(check: () => Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeout()), timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(check), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz`: the process is up and serving; deliberately checks nothing else. */
export const healthz: RequestHandler = (_req, res) => sendData(res, 200, { status: 'ok' });

/**
 * `/readyz`: every check in parallel, each bounded. The response names the checks and their outcome
 * only; error messages (which may hold connection strings) go to the log, redacted. While the app
 * is stopping it reports not ready so the load balancer drains it first.
 * 503 keeps the data envelope: no error code of the contract fits, and the per-check map is the point.
 */
export function readyz(opts: { checks: ReadinessChecks; logger: Logger; isStopping: () => boolean; timeoutMs?: number }): RequestHandler {
  const timeoutMs = opts.timeoutMs ?? READINESS_TIMEOUT_MS;
  return async (_req, res) => {
    if (opts.isStopping()) return sendData(res, 503, { status: 'stopping', checks: {} });
    const entries = await Promise.all(
      Object.entries(opts.checks).map(async ([name, entry]): Promise<[string, CheckStatus]> => {
        const critical = typeof entry === 'function';
        try {
          await runCheck(typeof entry === 'function' ? entry : entry.check, timeoutMs);
          return [name, 'ok'];
        } catch (err) {
          const status: CheckStatus = !critical ? 'degraded' : err instanceof CheckTimeout ? 'timeout' : 'failed';
          // The message only: a probe failing is an expected state (a dependency is down), not a bug to trace.
          opts.logger.warn('readiness check failed', { check: name, status, error: err instanceof Error ? err.message : String(err) });
          return [name, status];
        }
      }),
    );
    const failed = entries.filter(([, status]) => status !== 'ok' && status !== 'degraded').map(([name]) => name);
    const ready = failed.length === 0;
    sendData(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(entries), failed });
  };
}

/** `/metrics`: Prometheus text of this app's registry. */
export function metrics(registry: Registry): RequestHandler {
  return async (_req, res) => {
    const body = await registry.metrics();
    res.setHeader('Content-Type', registry.contentType);
    res.send(body);
  };
}
