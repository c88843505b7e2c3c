import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import { DomainError, isDomainError, type ErrorCode } from '@sched/contracts';
import { storeUnavailable } from '@sched/db';
import type { Logger } from '@sched/logger';
import { sendError, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS } from './envelope';
import { fastRouteOf } from './fast-path';

/**
 * Client errors raised by express and its parsers carry `status` and `expose` (http-errors); the router's
 * undecodable `%` in a path parameter is a URIError with status 400 only. They are the caller's fault, so
 * they map to a code; their own message (which may echo input) is not used.
 */
const EXPOSED_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

function exposedClientError(err: unknown): DomainError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { status, expose } = err as { status?: unknown; expose?: unknown };
  if (typeof status !== 'number' || !(expose === true || err instanceof URIError)) return undefined;
  const code = EXPOSED_STATUS_CODES[status];
  return code ? new DomainError(code) : undefined;
}

/** The route a request took, for the error log: the fast path's, or express's (req.route). */
function routeOf(req: IncomingMessage & { route?: { path?: unknown } }): unknown {
  return fastRouteOf(req) ?? req.route?.path;
}

/**
 * The one error answer: DomainError → its status and envelope; a store the request needs being
 * unreachable (libs/db storeUnavailable: Postgres down, restarting or full; RabbitMQ gone where the
 * request publishes) → `503 service_unavailable` with Retry-After, logged at warn without a stack (an
 * expected outage, which /readyz reports too); anything else → 500 with a generic message, logged at
 * error with its stack. The original error goes to the log only, never into the response. False when
 * the body had already started: there is no envelope to send then, and the caller cuts the connection.
 * On node's request and response only: the express error middleware and the fast path both use it.
 */
export function errorAnswer(logger: Logger): (err: unknown, req: IncomingMessage, res: ServerResponse) => boolean {
  return (err, req, res) => {
    let known = isDomainError(err) ? err : exposedClientError(err);
    if (!known) {
      const outage = storeUnavailable(err);
      if (outage) {
        logger.warn('store unavailable; answered 503', { ...outage, method: req.method, route: routeOf(req) });
        known = new DomainError('service_unavailable', { retryAfterSeconds: STORE_UNAVAILABLE_RETRY_AFTER_SECONDS });
      }
    }
    if (!known || known.code === 'internal_error') {
      logger.error('unhandled error', { err, method: req.method, route: routeOf(req) });
    }
    if (res.headersSent) return false;
    sendError(res, known ?? new DomainError('internal_error'));
    return true;
  };
}

/** errorAnswer as express's error middleware: an answer that had started goes on to express, which closes the connection. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  const answer = errorAnswer(logger);
  return (err: unknown, req, res, next) => {
    if (!answer(err, req, res)) next(err);
  };
}
