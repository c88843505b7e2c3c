import type http from 'node:http';
import express, { type RequestHandler } from 'express';
import type { Logger } from '@sched/logger';
import { errorMiddleware } from './error.middleware';
import { GracefulServer } from './graceful-server';
import type { HttpMetrics } from './http-metrics';
import { requestContextMiddleware } from './request-context.middleware';
import { RouteTable } from './route-table';

export interface OpsApp {
  listen(port: number, host: string): Promise<http.Server>;
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The operations listener of a public app (createHttpApp's `separateOps`): GET routes only (/healthz,
 * /readyz, /metrics), request id and metrics as on the main port, 404/405 envelopes for anything else.
 */
export function createOpsApp(opts: { logger: Logger; metrics: HttpMetrics; shutdownTimeoutMs: number; routes: Record<string, RequestHandler> }): OpsApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Nothing here acts for a caller: no forwarded context is believed and no credential is asked for
  // (probes and the scrape carry none; the network decides who reaches this port).
  app.use(requestContextMiddleware({ logger: opts.logger, metrics: opts.metrics }));
  const routes = new RouteTable(app);
  for (const [path, handler] of Object.entries(opts.routes)) routes.add('GET', path, [handler]);
  routes.installFallbacks();
  app.use(errorMiddleware(opts.logger));
  const server = new GracefulServer(app, opts.logger, opts.shutdownTimeoutMs);
  return {
    listen: (port, host) => server.listen(port, host),
    close: (timeoutMs) => server.close(timeoutMs),
  };
}
