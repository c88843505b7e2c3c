import type { Request, RequestHandler, Response } from 'express';
import { runWithContext, type Logger } from '@sched/logger';
import type { HttpMetrics } from './http-metrics';
import { initRequestContext } from './request-context';

/** Route label for requests no route matched: one series, whatever URLs scanners try. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** The route pattern (never the raw URL, which would explode metric cardinality and may carry ids). */
export function routeLabel(req: Request, res: Response): string {
  const explicit = res.locals.routePattern;
  if (typeof explicit === 'string') return explicit;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? req.baseUrl + path : UNMATCHED_ROUTE;
}

/**
 * First middleware of every app: fixes the request id (header + meta), runs the rest of the request in
 * the logging context, and on completion writes one log line and the request metrics.
 */
export function requestContextMiddleware(opts: { logger: Logger; metrics: HttpMetrics; trustForwarded: boolean }): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const ctx = initRequestContext(req, opts.trustForwarded);
    res.setHeader('X-Request-Id', ctx.requestId);
    res.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel(req, res);
      const status = res.statusCode;
      opts.metrics.observe({ method: req.method, route, status }, seconds);
      // winston formats (redacts, stringifies) a line before its transport drops it by level: at the
      // default level (info) this per-request line would be built for nothing.
      if (!opts.logger.isLevelEnabled('http')) return;
      // Method, route and status only: never headers (Authorization) or bodies.
      opts.logger.http('request', {
        request_id: ctx.requestId,
        method: req.method,
        route,
        status,
        duration_ms: Math.round(seconds * 1e4) / 10,
        ...(res.writableFinished ? {} : { aborted: true }),
      });
    });
    const logContext = ctx.workspaceId ? { request_id: ctx.requestId, workspace_id: ctx.workspaceId } : { request_id: ctx.requestId };
    runWithContext(logContext, () => next());
  };
}
