import type { ServerResponse } from 'node:http';
import { format, parse } from 'content-type';
import fresh from 'fresh';

export const JSON_UTF8 = 'application/json; charset=utf-8';
const HTML_UTF8 = 'text/html; charset=utf-8';

/** The type with its charset set to UTF-8, other parameters kept (as express's res.send does it). */
function utf8TypeOf(type: string): string {
  if (type === JSON_UTF8) return type;
  const parsed = parse(type);
  parsed.parameters.charset = 'utf-8';
  return format(parsed);
}

/** A GET or HEAD whose validators say the client's copy is current (express's req.fresh). */
function isFresh(res: ServerResponse): boolean {
  const { method, headers } = res.req;
  if (method !== 'GET' && method !== 'HEAD') return false;
  const status = res.statusCode;
  if (!((status >= 200 && status < 300) || status === 304)) return false;
  return fresh(headers, { etag: res.getHeader('ETag'), 'last-modified': res.getHeader('Last-Modified') });
}

/**
 * Sends a text answer on node's own response, the way express's res.send(text) does it in the apps of
 * createHttpApp (ETags and x-powered-by off): the Content-Type already set (text/html if none) with
 * charset utf-8, Content-Length (unless Transfer-Encoding is set), 304 for a fresh conditional GET,
 * no body for 204, 205, 304 or a HEAD. Works on express's responses too (they are node's), so the
 * fast path and the router write every answer with this one function.
 *
 * `body` is the text, or its pieces (UTF-8 bytes or text), written in one corked write: a cached
 * answer of tens of KB is not copied into a new string per request.
 */
export function sendText(res: ServerResponse, status: number, body: string | ReadonlyArray<string | Buffer>): void {
  res.statusCode = status;
  const type = res.getHeader('Content-Type');
  res.setHeader('Content-Type', typeof type === 'string' ? utf8TypeOf(type) : HTML_UTF8);
  let pieces = typeof body === 'string' ? [body] : body;
  if (!res.getHeader('Transfer-Encoding')) {
    let length = 0;
    for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece, 'utf8') : piece.length;
    res.setHeader('Content-Length', String(length));
  }
  if (isFresh(res)) res.statusCode = 304;
  if (res.statusCode === 204 || res.statusCode === 304) {
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.removeHeader('Transfer-Encoding');
    pieces = [];
  } else if (res.statusCode === 205) {
    res.setHeader('Content-Length', '0');
    res.removeHeader('Transfer-Encoding');
    pieces = [];
  }
  if (res.req.method === 'HEAD' || pieces.length === 0) {
    res.end();
    return;
  }
  if (pieces.length === 1) {
    res.end(pieces[0]!);
    return;
  }
  res.cork();
  for (let i = 0; i < pieces.length - 1; i++) res.write(pieces[i]!);
  res.end(pieces[pieces.length - 1]!);
}

/** express's res.json(value) in the apps of createHttpApp: JSON text, `application/json` unless a type is set. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (!res.getHeader('Content-Type')) res.setHeader('Content-Type', JSON_UTF8);
  sendText(res, status, JSON.stringify(value));
}
