import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runWithContext } from '@sched/logger';
import { createInternalClient, toUpstreamDomainError, UpstreamError, type InternalClient } from '../src';

interface Seen {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real local server: `/slow` answers after 1 s (past the client's timeout), others echo what they got. */
async function startUpstream() {
  const seen: Seen[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.url?.startsWith('/slow')) return void timers.add(setTimeout(() => res.end('{}'), 1000));
      if (req.url?.startsWith('/missing')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { code: 'not_found' } }));
      }
      if (req.url?.startsWith('/empty')) return void res.writeHead(204).end();
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const stop = async () => {
    timers.forEach(clearTimeout);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return { stop, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('internal client', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let client: InternalClient;
  /** The client whose 200-ms bound the timeout test needs; the others use `client`, whose bound no loaded machine reaches. */
  let timing: InternalClient;

  beforeAll(async () => {
    upstream = await startUpstream();
    client = createInternalClient({ baseUrl: upstream.baseUrl, service: 'availability', timeoutMs: 10_000 });
    timing = createInternalClient({ baseUrl: upstream.baseUrl, service: 'availability', timeoutMs: 200 });
    // The first connection in a process compiles undici's HTTP parser (WebAssembly), which on a
    // loaded machine alone can take longer than the 200 ms bound the timeout tests below need.
    const warm = createInternalClient({ baseUrl: upstream.baseUrl, timeoutMs: 10_000 });
    await warm.request('GET', '/warm-up');
    warm.close();
  });
  afterAll(async () => {
    client.close();
    timing.close();
    await upstream.stop();
  });

  it('propagates the current x-request-id and the caller context headers, and sends JSON and search params', async () => {
    const res = await runWithContext({ request_id: 'req_prop1' }, () =>
      client.request<{ ok: boolean }>('POST', '/internal/echo', {
        json: { a: 1 },
        searchParams: { tz: 'Europe/Berlin', skip: undefined },
        headers: { 'x-workspace-id': 'wsp_1' },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const seen = upstream.seen.at(-1)!;
    expect(seen.headers['x-request-id']).toBe('req_prop1');
    expect(seen.headers['x-workspace-id']).toBe('wsp_1');
    expect(seen.url).toBe('/internal/echo?tz=Europe%2FBerlin');
    expect(JSON.parse(seen.body)).toEqual({ a: 1 });
  });

  it('returns HTTP error statuses instead of throwing them, and an empty body as undefined', async () => {
    const missing = await client.request('GET', '/missing');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found' } });
    const empty = await client.request('DELETE', '/empty');
    expect(empty.status).toBe(204);
    expect(empty.body).toBeUndefined();
  });

  it('maps a response slower than timeoutMs to UpstreamError kind timeout, then 504 upstream_unavailable', async () => {
    const err = await timing.request('GET', '/slow').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe('timeout');
    const domain = toUpstreamDomainError(err as UpstreamError);
    expect(domain.code).toBe('upstream_unavailable');
    expect(domain.status).toBe(504);
  });

  it('maps a refused connection to UpstreamError kind unreachable, then 502', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const dead = createInternalClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 500 });
    const err = await dead.request('GET', '/x').catch((e: unknown) => e);
    dead.close();
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe('unreachable');
    expect(toUpstreamDomainError(err as UpstreamError).status).toBe(502);
  });

  it('retries an idempotent request after a timeout when retries is set', async () => {
    const retrying = createInternalClient({ baseUrl: upstream.baseUrl, timeoutMs: 100, retries: 2 });
    const before = upstream.seen.filter((s) => s.url === '/slow?n=retry').length;
    await expect(retrying.request('GET', '/slow', { searchParams: { n: 'retry' } })).rejects.toMatchObject({ kind: 'timeout' });
    retrying.close();
    // Requests are recorded when their body ends, which happens before the (late) reply.
    expect(upstream.seen.filter((s) => s.url === '/slow?n=retry').length - before).toBe(3);
  });
});
