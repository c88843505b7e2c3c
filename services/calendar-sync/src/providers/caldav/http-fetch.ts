import http from 'node:http';
import https from 'node:https';

/**
 * Pooled connections to calendar servers. Servers that keep connections open (most do; Radicale's
 * built-in server does not) are reused across operations instead of a TCP connect per request.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 30_000 }),
  'https:': new https.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 30_000 }),
};

/** Statuses whose responses carry no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);
/** A kept-alive connection the server had already closed: the request never reached it. */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * `fetch` for the CalDAV requests tsdav makes, over node:http with keep-alive: the same request and a
 * standard Response, whose body has been read in full. It costs far less CPU per request than the
 * built-in fetch. Whatever it does not handle itself (a body that is not text, another scheme, and any
 * redirect the caller did not ask to see) goes to the built-in fetch, so behaviour stays that of fetch.
 */
export async function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  if (input instanceof Request || (init.body !== undefined && init.body !== null && typeof init.body !== 'string')) return fetch(input, init);
  const url = new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
  let res: Response;
  try {
    res = await send(url, init);
  } catch (err) {
    if (!(err instanceof StaleSocketError)) throw err;
    res = await send(url, init); // once, on a new connection
  }
  if (REDIRECT.has(res.status) && init.redirect !== 'manual') return fetch(input, init);
  return res;
}

class StaleSocketError extends Error {}

function send(url: URL, init: RequestInit): Promise<Response> {
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  const body = typeof init.body === 'string' ? Buffer.from(init.body, 'utf8') : undefined;
  if (body) {
    headers['content-type'] ??= 'text/plain;charset=UTF-8';
    headers['content-length'] = String(body.length);
  }
  const signal = init.signal ?? undefined;
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: (init.method ?? 'GET').toUpperCase(), headers, agent: agents[url.protocol as 'http:' | 'https:'], signal },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(signal?.aborted ? signal.reason : new Error('the connection closed before the response was complete'));
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 599) return reject(new Error(`unexpected HTTP status ${status}`));
          const pairs: [string, string][] = [];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
          const response = new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers: pairs });
          Object.defineProperty(response, 'url', { value: url.href });
          resolve(response);
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && !signal?.aborted && err.code !== undefined && STALE_SOCKET.has(err.code);
      reject(stale ? new StaleSocketError(err.message, { cause: err }) : signal?.aborted ? signal.reason : err);
    });
    req.end(body);
  });
}
