import type { ServerResponse } from 'node:http';
import { DomainError, ERROR_STATUS, type ErrorDetail } from '@sched/contracts';
import { requestContext } from './request-context';
import { JSON_UTF8, sendJson, sendText } from './respond';

/** Body of every error response (decisions.md §2). */
export interface ErrorBody {
  error: { code: string; message: string; details: ErrorDetail[] };
  meta: { request_id: string };
}

function requestIdOf(res: ServerResponse): string {
  return requestContext(res.req).requestId;
}

/** Sends `{data, meta:{request_id, ...meta}}`; request_id always wins so a caller cannot spoof it. */
export function sendData(res: ServerResponse, status: number, data: unknown, meta: Record<string, unknown> = {}): void {
  const { request_id: _ignored, ...rest } = meta;
  sendJson(res, status, { data, meta: { request_id: requestIdOf(res), ...rest } });
}

const DATA_OPEN_BYTES = Buffer.from('{"data":', 'latin1');

/**
 * sendData for data already serialised (an answer served from a cache): `dataJson` must be the JSON
 * text of the data, or its UTF-8 bytes; the envelope around it is the same as sendData's. The pieces go
 * to the socket as they are: a cached answer is tens of KB, and a new string of it per request (then
 * its UTF-8 copy) would be most of the GC work. Bytes are sent as given (a cache that keeps an
 * answer's bytes has it encoded once); a text is encoded once for as long as the same text comes again.
 */
export function sendDataJson(res: ServerResponse, status: number, dataJson: string | Buffer): void {
  res.setHeader('Content-Type', JSON_UTF8);
  sendText(res, status, [DATA_OPEN_BYTES, typeof dataJson === 'string' ? utf8Of(dataJson) : dataJson, `,"meta":{"request_id":${JSON.stringify(requestIdOf(res))}}}`]);
}

/**
 * The UTF-8 bytes of the last data text sent: a cached answer is the same string object request after
 * request, so it is encoded (and measured) once, not per request. A different text replaces it.
 */
let lastText: string | undefined;
let lastBytes = Buffer.alloc(0);
function utf8Of(text: string): Buffer {
  if (text !== lastText) {
    lastBytes = Buffer.from(text, 'utf8');
    lastText = text;
  }
  return lastBytes;
}

/** The HTTP status of a DomainError: its own override (e.g. 504 for an upstream timeout) or its code's. */
export function statusOf(err: DomainError): number {
  return err.status ?? ERROR_STATUS[err.code];
}

export function errorBody(err: DomainError, requestId: string): ErrorBody {
  return { error: { code: err.code, message: err.message, details: err.details }, meta: { request_id: requestId } };
}

/**
 * Retry-After of `503 service_unavailable` (decisions.md §2: a store the request needs is unreachable):
 * long enough for a Postgres restart or failover to finish, short enough that a client is not kept
 * waiting after it did (docs/decisions.md).
 */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Sends a DomainError as the error envelope with the headers its code calls for. */
export function sendError(res: ServerResponse, err: DomainError): void {
  const retryAfter = err.retryAfterSeconds ?? (err.code === 'service_unavailable' ? STORE_UNAVAILABLE_RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(retryAfter))));
  if (err.code === 'unauthenticated') res.setHeader('WWW-Authenticate', 'Bearer');
  sendJson(res, statusOf(err), errorBody(err, requestIdOf(res)));
}
