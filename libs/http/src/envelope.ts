import type { Response } from 'express';
import { DomainError, ERROR_STATUS, type ErrorDetail } from '@sched/contracts';
import { requestContext } from './request-context';

/** Body of every error response (decisions.md §2). */
export interface ErrorBody {
  error: { code: string; message: string; details: ErrorDetail[] };
  meta: { request_id: string };
}

function requestIdOf(res: Response): string {
  return requestContext(res.req).requestId;
}

/** Sends `{data, meta:{request_id, ...meta}}`; request_id always wins so a caller cannot spoof it. */
export function sendData(res: Response, status: number, data: unknown, meta: Record<string, unknown> = {}): void {
  const { request_id: _ignored, ...rest } = meta;
  res.status(status).json({ data, meta: { request_id: requestIdOf(res), ...rest } });
}

/**
 * sendData for data already serialised (an answer served from a cache): `dataJson` must be the JSON
 * text of the data; the envelope around it is the same as sendData's.
 */
export function sendDataJson(res: Response, status: number, dataJson: string): void {
  res.status(status).type('application/json; charset=utf-8').send(`{"data":${dataJson},"meta":{"request_id":${JSON.stringify(requestIdOf(res))}}}`);
}

/** The HTTP status of a DomainError: its own override (e.g. 504 for an upstream timeout) or its code's. */
export function statusOf(err: DomainError): number {
  return err.status ?? ERROR_STATUS[err.code];
}

export function errorBody(err: DomainError, requestId: string): ErrorBody {
  return { error: { code: err.code, message: err.message, details: err.details }, meta: { request_id: requestId } };
}

/** Sends a DomainError as the error envelope with the headers its code calls for. */
export function sendError(res: Response, err: DomainError): void {
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(err.retryAfterSeconds))));
  if (err.code === 'unauthenticated') res.setHeader('WWW-Authenticate', 'Bearer');
  res.status(statusOf(err)).json(errorBody(err, requestIdOf(res)));
}
