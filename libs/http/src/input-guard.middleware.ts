import type { RequestHandler } from 'express';
import { DomainError, type ErrorDetail } from '@sched/contracts';

/**
 * Text that no service can store or pass on: a NUL character (PostgreSQL refuses it in text) and a
 * lone UTF-16 surrogate (not Unicode text: UTF-8 cannot encode it and encodeURIComponent throws).
 */
const UNREPRESENTABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A NUL or any surrogate: text without one (nearly all text) needs no look at its surrogate pairs. */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

const unrepresentable = (text: string): boolean => SUSPECT.test(text) && UNREPRESENTABLE.test(text);

/** A reported field's name: its keys from the root joined by '.', each after a non-empty name only. */
function fieldOf(path: ReadonlyArray<string | number>): string {
  let field = '';
  for (const key of path) field = field ? `${field}.${key}` : String(key);
  return field;
}

/**
 * Walks a value for such text. `path` holds the keys from the root, and a field's name (`a.0.b`) is
 * written only for a field that is reported (fieldOf): the usual body has none to report.
 */
function scan(value: unknown, path: Array<string | number>, out: ErrorDetail[], depth = 0): void {
  if (out.length >= 10 || depth > 32) return;
  if (typeof value === 'string') {
    if (unrepresentable(value)) out.push({ field: fieldOf(path), issue: 'invalid_format' });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      scan(value[i], path, out, depth + 1);
      path.pop();
    }
  } else if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const k of Object.keys(object)) {
      path.push(k);
      if (unrepresentable(k)) out.push({ field: fieldOf(path), issue: 'invalid_format' });
      else scan(object[k], path, out, depth + 1);
      path.pop();
    }
  }
}

/** NUL, a surrogate, or a `%` that is not an escape of an ASCII character other than NUL (`%2F` is fine). */
const QUERY_SUSPECT = /[\u0000\uD800-\uDFFF]|%(?![1-7][0-9A-Fa-f]|0[1-9A-Fa-f])/;

/**
 * A query (everything after the first `?`) with no NUL or surrogate and only escapes of ASCII
 * characters other than NUL: it decodes, and decoding or parsing it cannot yield a NUL or a surrogate.
 */
export function isPlainQuery(url: string): boolean {
  const q = url.indexOf('?');
  return q < 0 || !QUERY_SUSPECT.test(url.slice(q + 1));
}

/** Percent-escapes of the query that do not decode as UTF-8 (`%ED%A0%80`), which got and URL tools refuse. */
function queryDecodes(url: string): boolean {
  const q = url.indexOf('?');
  if (q < 0) return true;
  try {
    decodeURIComponent(url.slice(q + 1).replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs after routing, scope checks and body parsing (so 401/404/405/403/413/415 keep their order,
 * decisions.md §2) and before the handler: such input is `400 invalid_request` naming the field,
 * instead of failing later in a query or an outgoing call as a 500.
 */
export const inputGuard: RequestHandler = (req, _res, next) => {
  const details: ErrorDetail[] = [];
  // The usual query has nothing for either check to find: no escapes but of plain ASCII (with
  // express's default query parser, other escapes are the only way to spell a NUL, a surrogate or a
  // sequence that does not decode) and none of those characters raw. Then it is not parsed here.
  const plainQuery = req.app.get('query parser') === 'simple' && isPlainQuery(req.originalUrl) && isPlainQuery(req.url);
  if (!plainQuery && !queryDecodes(req.originalUrl)) details.push({ field: 'query', issue: 'invalid_format' });
  scan(req.params, [], details);
  if (!plainQuery) scan(req.query, [], details);
  if (req.body !== undefined) scan(req.body, [], details);
  if (details.length === 0) return next();
  next(new DomainError('invalid_request', { message: 'The request contains text that is not valid here.', details }));
};
