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

const JSON_UTF8 = 'application/json; charset=utf-8';
const DATA_OPEN = '{"data":';
const DATA_OPEN_BYTES = Buffer.from(DATA_OPEN, 'latin1');

/**
 * sendData for data already serialised (an answer served from a cache): `dataJson` must be the JSON
 * text of the data; the envelope around it is the same as sendData's.
 */
export function sendDataJson(res: Response, status: number, dataJson: string): void {
  const tail = `,"meta":{"request_id":${JSON.stringify(requestIdOf(res))}}}`;
  if (!writesPlainBody(res, status)) {
    res.status(status).type('application/json; charset=utf-8').send(`${DATA_OPEN}${dataJson}${tail}`);
    return;
  }
  // The same bytes and headers as res.send of the whole text, without building it: a cached answer
  // is tens of KB, and a new string of it per request (then its UTF-8 copy) is most of the GC work.
  // The pieces go to the socket as they are, in one write (corked until end()).
  const data = utf8Of(dataJson);
  res.status(status);
  res.setHeader('Content-Type', JSON_UTF8);
  res.setHeader('Content-Length', String(DATA_OPEN_BYTES.length + data.length + Buffer.byteLength(tail, 'utf8')));
  res.cork();
  res.write(DATA_OPEN_BYTES);
  res.write(data);
  res.end(tail, 'utf8');
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

/**
 * True when express's res.send would write the body as is, with just Content-Type and Content-Length:
 * not a HEAD (headers only), not a conditional request (res.send may turn it into a 304), not a status
 * without a body, and nothing set that res.send would react to (Transfer-Encoding, an ETag, ETags enabled).
 */
export function writesPlainBody(res: Response, status: number): boolean {
  const { method, headers } = res.req;
  return (
    method !== 'HEAD' &&
    headers['if-none-match'] === undefined &&
    headers['if-modified-since'] === undefined &&
    status !== 204 &&
    status !== 205 &&
    status !== 304 &&
    !res.hasHeader('Transfer-Encoding') &&
    !res.hasHeader('ETag') &&
    typeof res.app.get('etag fn') !== 'function'
  );
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
export function sendError(res: Response, err: DomainError): void {
  const retryAfter = err.retryAfterSeconds ?? (err.code === 'service_unavailable' ? STORE_UNAVAILABLE_RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(retryAfter))));
  if (err.code === 'unauthenticated') res.setHeader('WWW-Authenticate', 'Bearer');
  res.status(statusOf(err)).json(errorBody(err, requestIdOf(res)));
}
