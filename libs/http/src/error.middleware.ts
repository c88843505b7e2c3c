import type { ErrorRequestHandler } from 'express';
import { DomainError, isDomainError, type ErrorCode } from '@sched/contracts';
import { storeUnavailable } from '@sched/db';
import type { Logger } from '@sched/logger';
import { sendError, STORE_UNAVAILABLE_RETRY_AFTER_SECONDS } from './envelope';

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

/**
 * The one error middleware: DomainError → its status and envelope; a store the request needs being
 * unreachable (libs/db storeUnavailable: Postgres down, restarting or full; RabbitMQ gone where the
 * request publishes) → `503 service_unavailable` with Retry-After, logged at warn without a stack (an
 * expected outage, which /readyz reports too); anything else → 500 with a generic message, logged at
 * error with its stack. The original error goes to the log only, never into the response.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    let known = isDomainError(err) ? err : exposedClientError(err);
    if (!known) {
      const outage = storeUnavailable(err);
      if (outage) {
        logger.warn('store unavailable; answered 503', { ...outage, method: req.method, route: req.route?.path });
        known = new DomainError('service_unavailable', { retryAfterSeconds: STORE_UNAVAILABLE_RETRY_AFTER_SECONDS });
      }
    }
    if (!known || known.code === 'internal_error') {
      logger.error('unhandled error', { err, method: req.method, route: req.route?.path });
    }
    // Once the body has started there is no envelope to send; express closes the connection.
    if (res.headersSent) return next(err);
    sendError(res, known ?? new DomainError('internal_error'));
  };
}
