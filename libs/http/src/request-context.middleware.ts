import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError } from '@sched/contracts';
import { runWithContext, type Logger } from '@sched/logger';
import { fastRouteOf, type FastStep } from './fast-path';
import type { HttpMetrics } from './http-metrics';
import { CredentialRefused, INTERNAL_CREDENTIAL_HEADER, type CallerClaims, type CredentialVerifier } from './internal-credential';
import { applyCredential, initRequestContext, runWithRequestContext, type RequestContext } from './request-context';
import { OPEN_ROUTES } from './route-access';

/** Route label for requests no route matched: one series, whatever URLs scanners try. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** What express adds to a request and a response that the route label reads (both public express API). */
type Routed = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
type WithLocals = ServerResponse & { locals?: Record<string, unknown> };

/**
 * The route pattern (never the raw URL, which would explode metric cardinality and may carry ids): the
 * fast path's route, else express's (a fallback's `res.locals.routePattern`, else the matched route).
 */
export function routeLabel(req: Routed, res: WithLocals): string {
  const fast = fastRouteOf(req);
  if (fast !== undefined) return fast;
  const explicit = res.locals?.routePattern;
  if (typeof explicit === 'string') return explicit;
  const path = req.route?.path;
  return typeof path === 'string' ? (req.baseUrl ?? '') + path : UNMATCHED_ROUTE;
}

/** A probe or scrape path (exactly as registered: a variant spelling is not open, it needs a credential). */
function isOpenRoute(req: IncomingMessage): boolean {
  const url = req.url!;
  const q = url.indexOf('?');
  return OPEN_ROUTES.has(`${req.method} ${q < 0 ? url : url.slice(0, q)}`);
}

/**
 * First middleware of every app: fixes the request id (header + meta), and with `verifier` (every
 * service behind the gateway) checks the internal credential before anything else runs: a request
 * without a valid one for this service gets 401, whatever its path, and a valid one becomes the
 * request's context. Then it runs the rest of the request in the logging context, and on completion
 * writes one log line and the request metrics.
 */
export function requestContextMiddleware(opts: { logger: Logger; metrics: HttpMetrics; verifier?: CredentialVerifier }): FastStep {
  const { verifier } = opts;
  const proceed = (ctx: RequestContext, next: (err?: unknown) => void) => {
    const logContext = ctx.workspaceId ? { request_id: ctx.requestId, workspace_id: ctx.workspaceId } : { request_id: ctx.requestId };
    runWithRequestContext(ctx, logContext, () => next());
  };
  // Made once, not per request (a build that keeps function names would name each closure).
  const accept = (ctx: RequestContext, res: ServerResponse, next: (err?: unknown) => void, claims: CallerClaims) => {
    applyCredential(ctx, claims);
    res.setHeader('X-Request-Id', ctx.requestId);
    proceed(ctx, next);
  };
  const refuse = (ctx: RequestContext, req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void, err: unknown) => {
    res.setHeader('X-Request-Id', ctx.requestId);
    // The reason goes to the log only: the caller learns no more than "not a valid credential".
    opts.logger.warn('internal credential refused', { reason: err instanceof CredentialRefused ? err.reason : 'error', method: req.method });
    runWithContext({ request_id: ctx.requestId }, () => next(new DomainError('unauthenticated', { message: 'A valid internal credential is required.' })));
  };
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const ctx = initRequestContext(req);
    res.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel(req, res);
      const status = res.statusCode;
      opts.metrics.observe({ method: req.method!, route, status }, seconds);
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
    if (!verifier || isOpenRoute(req)) {
      res.setHeader('X-Request-Id', ctx.requestId);
      return proceed(ctx, next);
    }
    const header = req.headers[INTERNAL_CREDENTIAL_HEADER];
    verifier.verify(typeof header === 'string' ? header : undefined).then(
      (claims) => accept(ctx, res, next, claims),
      (err: unknown) => refuse(ctx, req, res, next, err),
    );
  };
}
