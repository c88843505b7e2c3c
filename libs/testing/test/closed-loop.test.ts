/** The benches' load generator (src/closed-loop.ts), against a local node:http server: no system runs here. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runClosedLoop } from '../src';

interface Seen {
  method: string;
  url: string;
  key: string;
  contentType: string | undefined;
  contentLength: string | undefined;
  body: string;
}

/** A server answering 201, or 409 to every fifth request; records each request. */
async function withServer(run: (url: string, seen: Seen[]) => Promise<void>): Promise<void> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, key: String(req.headers['idempotency-key']), contentType: req.headers['content-type'], contentLength: req.headers['content-length'], body });
      res.writeHead(seen.length % 5 === 0 ? 409 : 201, { 'content-type': 'application/json' }).end('{"data":{}}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe('runClosedLoop (the benches\' load generator)', () => {
  it('sends each request next() gives, counts the expected status and the others apart', async () => {
    await withServer(async (url, seen) => {
      let n = 0;
      const result = await runClosedLoop({
        url,
        clients: 4,
        durationS: 1,
        expectStatus: 201,
        next: () => {
          const i = n++;
          return { method: 'POST', path: '/v1/bookings', headers: { 'content-type': 'application/json', 'idempotency-key': `k-${i}` }, body: JSON.stringify({ i }) };
        },
      });
      expect(seen.length).toBeGreaterThan(10);
      expect(result.durationS).toBe(1);
      expect(result.ok + (result.otherStatuses['409'] ?? 0)).toBe(seen.length);
      expect(result.otherStatuses['409']).toBe(Math.floor(seen.length / 5));
      expect(result.errors).toBe(0);
      expect(result.latenciesMs).toHaveLength(result.ok);
      expect(result.latenciesMs).toEqual([...result.latenciesMs].sort((a, b) => a - b));
      expect(new Set(seen.map((s) => s.key)).size).toBe(seen.length);
      expect(seen.every((s) => s.method === 'POST' && s.url === '/v1/bookings' && JSON.parse(s.body).i === Number(s.key.slice(2)))).toBe(true);
      expect(seen.every((s) => s.contentType === 'application/json' && Number(s.contentLength) === Buffer.byteLength(s.body))).toBe(true);
    });
  });

  it('sends a GET when a request has no body, with its headers as given', async () => {
    await withServer(async (url, seen) => {
      const result = await runClosedLoop({ url, clients: 2, durationS: 0.3, expectStatus: 201, next: () => ({ path: '/v1/event-types/e/slots?from=2026-12-01', headers: { 'idempotency-key': 'g' } }) });
      expect(result.ok).toBeGreaterThan(0);
      expect(seen.every((s) => s.method === 'GET' && s.url === '/v1/event-types/e/slots?from=2026-12-01' && s.key === 'g' && s.contentType === undefined && s.body === '')).toBe(true);
    });
  });

  it('counts a request without an answer as a transport error', async () => {
    // A port nothing listens on: every request fails to connect.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const result = await runClosedLoop({ url: `http://127.0.0.1:${port}`, clients: 1, durationS: 0.2, expectStatus: 201, next: () => ({ path: '/', headers: {} }) });
    expect(result.errors).toBeGreaterThan(0);
    expect(result.ok).toBe(0);
    expect(result.latenciesMs).toEqual([]);
  });
});
