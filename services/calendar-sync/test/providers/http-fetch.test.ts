import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpFetch } from '../../src/providers/caldav/http-fetch';

async function startServer(handler: http.RequestListener, opts: { keepAliveTimeout?: number } = {}) {
  const connections: unknown[] = [];
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
      await new Promise((r) => setTimeout(r, 50)); // the server drops the idle connection
      expect(await (await httpFetch(`${srv.url}/a`, { method: 'PUT', body: 'y' })).text()).toBe('x');
    } finally {
      await srv.close();
    }
  });

  it('follows redirects as fetch does unless asked not to, and carries bodiless statuses', async () => {
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
