import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { waitFor } from '@sched/testing';
import { createWebhookSender, type SenderOptions, type WebhookSender } from '../src/delivery/webhook.sender';
import { createGotReferenceSender } from './support/got-reference-sender';

/**
 * One attempt on the wire (src/delivery/webhook.sender.ts, on undici): the same request and the same
 * result as the got sender it replaced (test/support/got-reference-sender.ts), case by case: the answer
 * decided by the response head, one deadline that also ends a body still coming, at most 64 KiB read,
 * one kept-alive connection per origin, failures classified alike. The address policy itself is
 * ssrf-guard.test.ts's.
 */

interface Seen {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the request's connection closed (ms since epoch). */
  closedAt?: number;
  /** /big: bytes handed to the socket, and whether all of them were. */
  written: number;
  finished: boolean;
}

const BIG_BYTES = 32 * 1024 * 1024;

/** A receiver whose answer depends on the path; counts connections and tells when each request's connection closed. */
async function startServer() {
  let connections = 0;
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Seen = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), written: 0, finished: false };
      seen.push(entry);
      req.socket.once('close', () => (entry.closedAt = Date.now()));
      const path = req.url ?? '/';
      if (path === '/ok') return void res.end('ok');
      if (path === '/close') {
        // The connection ends with this answer: the next attempt needs a new one.
        res.setHeader('connection', 'close');
        return void res.end('ok');
      }
      if (path === '/busy') {
        res.writeHead(503, { 'retry-after': '120' });
        return void res.end('later');
      }
      if (path === '/moved') {
        res.writeHead(301, { location: 'http://169.254.169.254/' });
        return void res.end();
      }
      if (path === '/no-head') return void setTimeout(() => res.end('too late'), 1500);
      if (path === '/head-then-silence') {
        // The head at once, then a body that never ends.
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.write('partial');
      }
      if (path === '/big') {
        // 32 MiB, written as fast as the client reads (far more than the kernel buffers on both sides
        // hold): the sender must stop reading after 64 KiB and close the connection.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.on('finish', () => (entry.finished = true));
        res.on('error', () => undefined);
        const chunk = Buffer.alloc(64 * 1024, 97);
        const pump = (): void => {
          while (entry.written < BIG_BYTES && !res.destroyed) {
            entry.written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        return pump();
      }
      res.writeHead(404);
      res.end();
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    seen,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const HEADERS = { 'content-type': 'application/json', 'webhook-id': 'wev_0123456789abcdefghij', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abc=' };
const BODY = JSON.stringify({ id: 'wev_0123456789abcdefghij', type: 'booking.created', data: { name: 'Zoë' } });

const notFound = async (): Promise<LookupAddress[]> => {
  throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
};

let srv: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => (srv = await startServer()));
afterAll(() => srv.close());

const senders: Array<[string, (o: SenderOptions) => WebhookSender]> = [
  ['undici (the sender)', createWebhookSender],
  ['got (the reference)', createGotReferenceSender],
];

describe.each(senders)('%s', (_name, create) => {
  let sender: WebhookSender;
  beforeEach(() => (sender = create({ mode: 'local', timeoutMs: 800 })));
  afterEach(() => sender.close());

  it('returns the status of the answer and a Retry-After it carries; a 3xx is returned, not followed', async () => {
    expect((await sender.send(srv.url('/ok'), HEADERS, BODY)).result).toEqual({ kind: 'response', statusCode: 200 });
    expect((await sender.send(srv.url('/busy'), HEADERS, BODY)).result).toEqual({ kind: 'response', statusCode: 503, retryAfter: '120' });
    const before = srv.seen.length;
    expect((await sender.send(srv.url('/moved'), HEADERS, BODY)).result).toEqual({ kind: 'response', statusCode: 301 });
    expect(srv.seen).toHaveLength(before + 1);
  });

  it('keeps its connections to an origin alive across attempts', async () => {
    const before = srv.connections();
    for (let i = 0; i < 8; i++) expect((await sender.send(srv.url('/ok'), HEADERS, BODY)).result).toEqual({ kind: 'response', statusCode: 200 });
    // got's agent reuses its one socket; undici's pool opens a spare one when its first request is
    // dispatched while the first connection is still being made, and reuses both from then on.
    expect(srv.connections() - before).toBeLessThanOrEqual(2);
  });

  it('is a timeout when no head comes within the deadline', async () => {
    const { result, latencyMs } = await sender.send(srv.url('/no-head'), HEADERS, BODY);
    expect(result).toEqual({ kind: 'error', errorKind: 'timeout', error: 'no response within 800 ms' });
    expect(latencyMs).toBeGreaterThanOrEqual(750);
  });

  it('decides on the head, and closes the connection at the deadline when the body is still coming', async () => {
    const started = Date.now();
    const { result, latencyMs } = await sender.send(srv.url('/head-then-silence'), HEADERS, BODY);
    expect(result).toEqual({ kind: 'response', statusCode: 200 });
    expect(latencyMs).toBeLessThan(700);
    const request = srv.seen.at(-1)!;
    const closedAt = await waitFor(() => request.closedAt, { timeoutMs: 5000 });
    expect(closedAt - started).toBeGreaterThanOrEqual(750);
  });

  it('reads at most 64 KiB of the body: the connection is closed long before the 32 MiB are written', async () => {
    expect((await sender.send(srv.url('/big'), HEADERS, BODY)).result).toEqual({ kind: 'response', statusCode: 200 });
    const request = srv.seen.at(-1)!;
    await waitFor(() => request.closedAt, { timeoutMs: 5000 });
    expect(request.finished).toBe(false);
    // What the kernel buffers on both sides of the loopback comes on top of the 64 KiB read.
    expect(request.written).toBeLessThan(BIG_BYTES);
  });

  it('classifies a refused connection and a name that does not resolve', async () => {
    const port = await closedPort();
    expect((await sender.send(`http://127.0.0.1:${port}/x`, HEADERS, BODY)).result).toEqual({ kind: 'error', errorKind: 'connection', error: 'ECONNREFUSED' });
    const noDns = create({ mode: 'local', timeoutMs: 800, resolveAll: notFound });
    try {
      expect((await noDns.send(`http://nowhere.example.test:${srv.port}/x`, HEADERS, BODY)).result).toEqual({ kind: 'error', errorKind: 'dns', error: 'ENOTFOUND' });
    } finally {
      noDns.close();
    }
  });

  it('checks the name again on every new connection to a URL it sent to before (DNS rebinding)', async () => {
    const answers = ['127.0.0.1', '169.254.169.254'];
    const lookups: string[] = [];
    const rebinding = create({
      mode: 'local',
      timeoutMs: 800,
      resolveAll: async (host) => {
        lookups.push(host);
        return [{ address: answers[Math.min(lookups.length, answers.length) - 1]!, family: 4 }];
      },
    });
    try {
      const url = `http://rebinding.example.test:${srv.port}/close`;
      const before = srv.seen.length;
      expect((await rebinding.send(url, HEADERS, BODY)).result).toEqual({ kind: 'response', statusCode: 200 });
      // The receiver closed that connection: the same URL needs a new one, whose lookup now answers metadata.
      expect((await rebinding.send(url, HEADERS, BODY)).result).toMatchObject({ kind: 'error', errorKind: 'address_not_allowed' });
      expect(lookups).toEqual(['rebinding.example.test', 'rebinding.example.test']);
      expect(srv.seen).toHaveLength(before + 1);
    } finally {
      rebinding.close();
    }
  });

  it('refuses a URL this mode does not allow without connecting', async () => {
    const before = srv.connections();
    const prod = create({ mode: 'production', timeoutMs: 800 });
    try {
      // Twice each: the second time the URL's checks are the remembered ones.
      for (let i = 0; i < 2; i++) {
        expect((await prod.send(srv.url('/ok'), HEADERS, BODY)).result).toEqual({ kind: 'error', errorKind: 'url_not_allowed', error: 'scheme_not_allowed' });
        expect((await prod.send(`https://127.0.0.1:${srv.port}/ok`, HEADERS, BODY)).result).toEqual({
          kind: 'error',
          errorKind: 'address_not_allowed',
          error: 'address_not_allowed',
        });
      }
    } finally {
      prod.close();
    }
    expect(srv.connections()).toBe(before);
  });
});

describe('on the wire', () => {
  it('sends what the got sender sent: the same headers (user-agent sched-webhooks/1, no accept-encoding) and the same bytes', async () => {
    const received: Seen[] = [];
    for (const [, create] of senders) {
      const sender = create({ mode: 'local', timeoutMs: 800 });
      try {
        await sender.send(srv.url('/ok'), HEADERS, BODY);
        received.push(srv.seen.at(-1)!);
      } finally {
        sender.close();
      }
    }
    const [undici, got] = received;
    expect(undici!.body).toBe(BODY);
    expect(undici!.body).toBe(got!.body);
    expect(undici!.headers).toEqual(got!.headers);
    expect(undici!.headers).toMatchObject({ ...HEADERS, 'user-agent': 'sched-webhooks/1', 'content-length': String(Buffer.byteLength(BODY)), host: `127.0.0.1:${srv.port}` });
    expect(undici!.headers['accept-encoding']).toBeUndefined();
  });
});
