import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@sched/testing';
import { createHttpFetch } from '../../src/providers/caldav/http-fetch';

// Local mode: the test servers listen on loopback.
const httpFetch = createHttpFetch({ mode: 'local' });
afterAll(() => httpFetch.close());

async function startServer(handler: http.RequestListener, opts: { keepAliveTimeout?: number } = {}) {
  const connections: import('node:net').Socket[] = [];
  const server = http.createServer(handler);
  if (opts.keepAliveTimeout !== undefined) server.keepAliveTimeout = opts.keepAliveTimeout;
  server.on('connection', (s) => connections.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('httpFetch', () => {
  it('sends method, headers and body, answers a standard Response, and reuses the connection when the server keeps it', async () => {
    const seen: Array<{ method?: string; headers: http.IncomingHttpHeaders; body: string }> = [];
    const srv = await startServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body });
        res.writeHead(207, { 'content-type': 'application/xml', etag: '"e1"' });
        res.end('<ok/>');
      });
    });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await httpFetch(`${srv.url}/cal/`, { method: 'REPORT', headers: { 'Content-Type': 'text/xml', Depth: '1' }, body: 'ü' });
        expect(res.status).toBe(207);
        expect(res.ok).toBe(true);
        expect(res.headers.get('etag')).toBe('"e1"');
        expect(res.url).toBe(`${srv.url}/cal/`);
        expect(await res.text()).toBe('<ok/>');
      }
      expect(seen[0]).toMatchObject({ method: 'REPORT', body: 'ü', headers: { 'content-type': 'text/xml', depth: '1', 'content-length': '2' } });
      expect(srv.connections).toHaveLength(1);
    } finally {
      await srv.close();
    }
  });

  it('works on after the server closed an idle kept-alive connection', async () => {
    const srv = await startServer((_req, res) => res.end('x'), { keepAliveTimeout: 1 });
    try {
      expect(await (await httpFetch(`${srv.url}/a`)).text()).toBe('x');
      await waitFor(() => srv.connections[0]?.destroyed === true); // the server drops the idle connection
      expect(await (await httpFetch(`${srv.url}/a`, { method: 'PUT', body: 'y' })).text()).toBe('x');
    } finally {
      await srv.close();
    }
  });

  it('sends a request again once, on a new connection, when its connection is reset (any method), not twice', async () => {
    const hits = new Map<string, number>();
    const srv = await startServer((req, res) => {
      const n = (hits.get(req.url!) ?? 0) + 1;
      hits.set(req.url!, n);
      if (req.url === '/always' || n === 1) return void req.socket.destroy();
      res.writeHead(207);
      res.end('<ok/>');
    });
    try {
      const res = await httpFetch(`${srv.url}/once`, { method: 'PROPFIND', headers: { depth: '0' }, body: '<x/>' });
      expect([res.status, await res.text(), hits.get('/once')]).toEqual([207, '<ok/>', 2]);
      await expect(httpFetch(`${srv.url}/always`, { method: 'REPORT', body: '<x/>' })).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(hits.get('/always')).toBe(2);
    } finally {
      await srv.close();
    }
  });

  it('follows same-origin redirects as fetch does unless asked not to, and carries bodiless statuses', async () => {
    const srv = await startServer((req, res) => {
      if (req.url === '/old') {
        res.writeHead(301, { location: '/new' });
        res.end();
      } else if (req.url === '/new') res.end('moved here');
      else {
        res.writeHead(204);
        res.end();
      }
    });
    try {
      const followed = await httpFetch(`${srv.url}/old`);
      expect(followed.status).toBe(200);
      expect(await followed.text()).toBe('moved here');
      const manual = await httpFetch(`${srv.url}/old`, { redirect: 'manual' });
      expect(manual.status).toBe(301);
      expect(manual.headers.get('location')).toBe('/new');
      const empty = await httpFetch(`${srv.url}/gone`, { method: 'DELETE' });
      expect(empty.status).toBe(204);
      expect(await empty.text()).toBe('');
    } finally {
      await srv.close();
    }
  });

  it('rejects when the signal fires before the answer, and when nothing listens', async () => {
    const srv = await startServer(() => undefined); // never answers
    try {
      const signal = AbortSignal.timeout(100);
      await expect(httpFetch(`${srv.url}/slow`, { signal })).rejects.toBeDefined();
      expect(signal.aborted).toBe(true);
    } finally {
      await srv.close();
    }
    await expect(httpFetch(`${srv.url}/closed`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('httpFetch: redirects and the outbound address policy', () => {
  it('follows a same-origin redirect with the headers it was given (credentials included), a 303 as a GET', async () => {
    const seen: Array<{ method?: string; url?: string; authorization?: string }> = [];
    const srv = await startServer((req, res) => {
      seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
      if (req.url === '/dav') {
        res.writeHead(301, { location: '/dav/' });
        res.end();
      } else if (req.url === '/post') {
        res.writeHead(303, { location: '/result' });
        res.end();
      } else res.end('ok');
    });
    try {
      const res = await httpFetch(`${srv.url}/dav`, { method: 'PROPFIND', headers: { authorization: 'Basic dTpw' }, body: '<x/>' });
      expect(await res.text()).toBe('ok');
      await httpFetch(`${srv.url}/post`, { method: 'PUT', body: 'x' });
      expect(seen).toEqual([
        { method: 'PROPFIND', url: '/dav', authorization: 'Basic dTpw' },
        { method: 'PROPFIND', url: '/dav/', authorization: 'Basic dTpw' },
        { method: 'PUT', url: '/post', authorization: undefined },
        { method: 'GET', url: '/result', authorization: undefined },
      ]);
    } finally {
      await srv.close();
    }
  });

  it('refuses a redirect to another origin: the other server never sees a request, let alone the credentials', async () => {
    const otherRequests: http.IncomingHttpHeaders[] = [];
    const other = await startServer((req, res) => {
      otherRequests.push(req.headers);
      res.end('other');
    });
    const srv = await startServer((req, res) => {
      res.writeHead(req.url === '/a' ? 301 : 307, { location: `${other.url}/steal` });
      res.end();
    });
    try {
      for (const path of ['/a', '/b']) {
        await expect(httpFetch(`${srv.url}${path}`, { method: 'PROPFIND', headers: { authorization: 'Basic dTpw' } })).rejects.toMatchObject({ name: 'CrossOriginRedirectError' });
      }
      // Asked to see redirects, the caller gets the 3xx itself (and decides: dav-fetch.ts refuses other origins).
      const manual = await httpFetch(`${srv.url}/a`, { redirect: 'manual', headers: { authorization: 'Basic dTpw' } });
      expect(manual.status).toBe(301);
      expect(other.connections).toHaveLength(0);
      expect(otherRequests).toHaveLength(0);
    } finally {
      await Promise.all([srv.close(), other.close()]);
    }
  });

  it('in production mode refuses loopback in every spelling, and a name resolving to it, before connecting', async () => {
    const srv = await startServer((_req, res) => res.end('should not be reached'));
    const port = new URL(srv.url).port;
    // The name exists only in this fake DNS; it answers with the loopback address (as DNS rebinding would).
    const prod = createHttpFetch({ mode: 'production', resolveAll: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      for (const host of ['127.0.0.1', '127.1', '0.0.0.0', '0x7f000001', '2130706433', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::1]', 'localhost', 'cal.localhost', 'rebind.example.test']) {
        await expect(prod(`http://${host}:${port}/`)).rejects.toMatchObject({ name: 'AddressNotAllowedError' });
      }
      expect(srv.connections).toHaveLength(0);
      // The same name in local mode: the socket connects to the address the guarded lookup checked.
      const local = createHttpFetch({ mode: 'local', resolveAll: async () => [{ address: '127.0.0.1', family: 4 }] });
      expect(await (await local(`http://rebind.example.test:${port}/`)).text()).toBe('should not be reached');
      local.close();
    } finally {
      prod.close();
      await srv.close();
    }
  });

  it('never hands a request to the built-in fetch (which knows no address policy)', async () => {
    await expect(httpFetch('ftp://127.0.0.1/x')).rejects.toBeInstanceOf(TypeError);
    await expect(httpFetch('http://127.0.0.1:1/x', { method: 'PUT', body: new Uint8Array([1]) })).rejects.toBeInstanceOf(TypeError);
  });
});
