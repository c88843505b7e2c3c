import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { DomainError } from '@sched/contracts';

/** decisions.md §1: bodies over 64 KiB are 413. */
export const BODY_LIMIT_BYTES = 64 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

const parseJson = express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: () => true });

/** True when the request carries bytes: a positive Content-Length, or chunked with no length. */
export function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

function isJsonContentType(req: Request): boolean {
  const type = req.headers['content-type']?.split(';')[0]?.trim() ?? '';
  return JSON_TYPE.test(type);
}

/** body-parser errors carry a `type`; map them to the contract's codes without their (internal) messages. */
function toBodyError(err: unknown): DomainError {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') return new DomainError('payload_too_large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new DomainError('unsupported_media_type');
  return new DomainError('invalid_request', { message: 'The request body is not valid JSON.' });
}

function rejectUnread(req: Request, next: NextFunction, err: DomainError): void {
  // Drain what the client is still sending so it can read our answer instead of seeing a reset.
  req.resume();
  next(err);
}

/**
 * Per-route body handling, run after routing so 404/405 win over 413/415 (decisions.md §2 order).
 * No body → `req.body` stays undefined; non-JSON body → 415; too big → 413; malformed → 400.
 */
export const jsonBody: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  if (!hasBody(req)) return next();
  if (Number(req.headers['content-length']) > BODY_LIMIT_BYTES) return rejectUnread(req, next, new DomainError('payload_too_large'));
  if (!isJsonContentType(req)) return rejectUnread(req, next, new DomainError('unsupported_media_type'));
  // raw-body (inside the parser) re-enters the request's async context, so request_id survives; tested.
  parseJson(req, res, (err?: unknown) => (err ? next(toBodyError(err)) : next()));
};
