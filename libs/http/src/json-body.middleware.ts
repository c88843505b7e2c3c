import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { DomainError } from '@sched/contracts';

/** decisions.md §1: bodies over 64 KiB are 413. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Deepest nesting of arrays and objects a JSON body may have. The deepest body of the contract
 * (metadata, itself 3 deep, inside a request) is about 5 levels; 64 leaves room and keeps every
 * later walk of the value (validation, JSON.stringify when the gateway forwards it) far from the
 * stack limit, which 10,000 levels overflowed (a 500).
 */
export const BODY_MAX_DEPTH = 64;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;
/** RFC 8259 §8.1: JSON between systems is UTF-8. Any other charset is 415 (utf-16 used to be decoded). */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

/** The body-parser error `type` of a body refused by checkRawBody. */
const NOT_UTF8 = 'sched.body.not_utf8';
const TOO_DEEP = 'sched.body.too_deep';

/**
 * Whether the JSON text nests arrays and objects deeper than `max`: brackets and braces counted
 * outside strings, on the raw bytes (UTF-8: every byte of a multi-byte character is >= 0x80, so none
 * is mistaken for a bracket or a quote). Malformed text is left to JSON.parse.
 */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  if (bytes.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next byte is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Runs on the raw bytes before they are decoded and parsed (body-parser's `verify`): bytes that are
 * not UTF-8 would otherwise be decoded into U+FFFD and stored as such; nesting past BODY_MAX_DEPTH
 * is refused before JSON.parse builds it.
 */
function checkRawBody(_req: IncomingMessage, _res: ServerResponse, bytes: Buffer): void {
  if (!isUtf8(bytes)) throw Object.assign(new Error('request body is not UTF-8'), { type: NOT_UTF8 });
  if (nestsDeeperThan(bytes, BODY_MAX_DEPTH)) throw Object.assign(new Error('request body nests too deep'), { type: TOO_DEEP });
}

const parseJson = express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: () => true, verify: checkRawBody });

/** True when the request carries bytes: a positive Content-Length, or chunked with no length. */
export function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

function isJsonContentType(req: Request): boolean {
  const header = req.headers['content-type'] ?? '';
  const type = header.split(';')[0]?.trim() ?? '';
  if (!JSON_TYPE.test(type)) return false;
  const charset = CHARSET.exec(header)?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

/** body-parser errors carry a `type`; map them to the contract's codes without their (internal) messages. */
function toBodyError(err: unknown): DomainError {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') return new DomainError('payload_too_large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new DomainError('unsupported_media_type');
  if (type === NOT_UTF8) {
    return new DomainError('invalid_request', { message: 'The request body is not valid UTF-8.', details: [{ field: 'body', issue: 'invalid_format' }] });
  }
  if (type === TOO_DEEP) {
    return new DomainError('invalid_request', {
      message: `The request body nests arrays and objects more than ${BODY_MAX_DEPTH} levels deep.`,
      details: [{ field: 'body', issue: 'too_deep' }],
    });
  }
  return new DomainError('invalid_request', { message: 'The request body is not valid JSON.' });
}

function rejectUnread(req: Request, next: NextFunction, err: DomainError): void {
  // Drain what the client is still sending so it can read our answer instead of seeing a reset.
  req.resume();
  next(err);
}

/**
 * Per-route body handling, run after routing so 404/405 win over 413/415 (decisions.md §2 order).
 * No body → `req.body` stays undefined; non-JSON body, or a charset other than UTF-8 → 415; too big
 * → 413; malformed, not UTF-8 (`body`/`invalid_format`) or nested deeper than BODY_MAX_DEPTH
 * (`body`/`too_deep`) → 400.
 */
export const jsonBody: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  if (!hasBody(req)) return next();
  if (Number(req.headers['content-length']) > BODY_LIMIT_BYTES) return rejectUnread(req, next, new DomainError('payload_too_large'));
  if (!isJsonContentType(req)) return rejectUnread(req, next, new DomainError('unsupported_media_type'));
  // raw-body (inside the parser) re-enters the request's async context, so request_id survives; tested.
  parseJson(req, res, (err?: unknown) => (err ? next(toBodyError(err)) : next()));
};
