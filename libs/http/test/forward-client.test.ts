import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { runWithContext } from '@sched/logger';
import { createCredentialSigner, createForwardClient, createInternalClient, INTERNAL_CREDENTIAL_HEADER, parseInternalKeyRing, toUpstreamDomainError, UpstreamError, type ForwardClient } from '../src';
import { IDLE_SOCKET_MS, targetResolver } from '../src/forward-client';
import { waitFor } from '../../testing/src/wait-for';
import { createGotReferenceClient } from './support/got-reference';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
  remotePort: number;
}

/**
 * A real local server. `/slow` answers after 1 s; `/reset-first` destroys the socket of its first
 * request and answers the next; `/reset` always destroys it; `/half` sends half a body then closes;
 * `/status/503` answers 503 with Retry-After; others echo. Counts TCP connections.
 */
async function startUpstream() {
  const seen: Seen[] = [];
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url!;
      const n = (hits.get(url) ?? 0) + 1;
      hits.set(url, n);
      seen.push({ method: req.method!, url, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString(), remotePort: req.socket.remotePort! });
      if (url.startsWith('/slow')) return void timers.add(setTimeout(() => res.end('{}'), 1000));
      if (url.startsWith('/reset-first') && n === 1) return void req.socket.destroy();
      if (url.startsWith('/reset') && !url.startsWith('/reset-first')) return void req.socket.destroy();
      if (url.startsWith('/half')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        return void res.write('{"partial":', () => req.socket.destroy());
      }
      if (url.startsWith('/status/503')) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '7', 'x-internal': 'yes' });
        return void res.end('{"error":{"code":"unavailable"}}');
      }
      if (url.startsWith('/bytes')) {
        // Bytes that are not UTF-8, and no content-type: passed back exactly as received.
        res.writeHead(200);
        return void res.end(Buffer.from([0xff, 0x00, 0xfe, 0x41]));
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json; charset=utf-8', location: '/v1/things/1' });
      res.end(JSON.stringify({ echo: { method: req.method, url } }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    hits: (url: string) => hits.get(url) ?? 0,
    connections: () => connections,
    stop: async () => {
      timers.forEach(clearTimeout);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A TCP server that answers every request with bytes that are not HTTP. */
async function startGarbage() {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('data', () => {
      requests++;
      sock.end('NOT HTTP AT ALL\r\n\r\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    stop: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A request as HTTP means it: the request line, the headers (names lower-cased, in name order, without
 * accept-encoding, which got adds and we do not) and the body. Header order and the spelling of a
 * name carry no meaning, and undici writes `host` and `connection` first where node:http wrote them last.
 */
function meaning(raw: string): { line: string; headers: string[]; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [line, ...fields] = raw.slice(0, end).split('\r\n');
  const headers = fields
    .map((f) => {
      const colon = f.indexOf(':');
      return `${f.slice(0, colon).toLowerCase()}: ${f.slice(colon + 1).trim()}`;
    })
    .filter((h) => !h.startsWith('accept-encoding:'))
    .sort();
  return { line: line!, headers, body: raw.slice(end + 4) };
}

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

/**
 * A raw TCP server that records each whole request (head and content-length body) as the bytes on the
 * wire, and answers every one with `answer`.
 */
async function startCaptureServer(answer: Buffer): Promise<{ baseUrl: string; captured: string[]; close(): Promise<void> }> {
  const captured: string[] = [];
  const sockets = new Set<net.Socket>();
  const raw = net.createServer((sock) => {
    sockets.add(sock);
    let buffered = '';
    sock.on('data', (d) => {
      buffered += d.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(buffered.slice(0, end));
      if (end < 0 || buffered.length < end + 4 + Number(length?.[1] ?? 0)) return;
      captured.push(buffered);
      buffered = '';
      sock.write(answer);
    });
  });
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(raw.address() as AddressInfo).port}`,
    captured,
    close: async () => {
      sockets.forEach((sock) => sock.destroy());
      await new Promise((r) => raw.close(r));
    },
  };
}

describe('forward client', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let client: ForwardClient;

  beforeAll(async () => {
    upstream = await startUpstream();
    client = createForwardClient({ baseUrl: upstream.baseUrl, service: 'booking', timeoutMs: 300, retries: 1 });
    // The first connection in a process compiles undici's HTTP parser (WebAssembly), which on a
    // loaded machine alone can take longer than the 300 ms bound the timeout tests need.
    const warm = createForwardClient({ baseUrl: upstream.baseUrl, timeoutMs: 10_000 });
    await warm.request('GET', '/warm-up');
    warm.close();
  });
  afterAll(async () => {
    client.close();
    await upstream.stop();
  });

  it('sends the given headers, the body with its length and the path as given; passes status, headers and body back', async () => {
    const body = JSON.stringify({ name: 'Zoë' });
    const res = await client.request('POST', '/v1/bookings?x=1&y=%20z', {
      headers: { 'x-request-id': 'req_fwd1', 'x-workspace-id': 'wsp_1', 'x-api-key-id': 'key_1', 'idempotency-key': 'idem-1', 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.location).toBe('/v1/things/1');
    expect(Buffer.isBuffer(res.body)).toBe(true);
    expect(JSON.parse(res.body.toString())).toEqual({ echo: { method: 'POST', url: '/v1/bookings?x=1&y=%20z' } });
    const seen = upstream.seen.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', url: '/v1/bookings?x=1&y=%20z', body });
    expect(seen.headers).toMatchObject({
      'x-request-id': 'req_fwd1',
      'x-workspace-id': 'wsp_1',
      'x-api-key-id': 'key_1',
      'idempotency-key': 'idem-1',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'sched-internal',
    });
    // Nothing is asked compressed, so the answer's bytes are what the service wrote.
    expect(seen.headers['accept-encoding']).toBeUndefined();
  });

  it('passes a GET body on, and takes x-request-id from the current context when not given', async () => {
    const res = await runWithContext({ request_id: 'req_ctx1' }, () =>
      client.request('GET', '/v1/event-types', { headers: { 'content-type': 'application/json' }, body: '{"limit":5}' }),
    );
    expect(res.status).toBe(200);
    const seen = upstream.seen.at(-1)!;
    expect(seen).toMatchObject({ method: 'GET', body: '{"limit":5}' });
    expect(seen.headers['x-request-id']).toBe('req_ctx1');
  });

  it('with a signer: one x-request-id, the credential’s, and the credential for the called service', async () => {
    const signer = createCredentialSigner({ service: 'gateway', ring: await parseInternalKeyRing(`k1:${randomBytes(32).toString('base64')}`) });
    const signed = createForwardClient({ baseUrl: upstream.baseUrl, service: 'booking', timeoutMs: 300, signer });
    try {
      const who = { principal: 'api_key' as const, workspaceId: 'wsp_1', apiKeyId: 'key_1', scopes: ['bookings:read'], requestId: 'req_signed' };
      await runWithContext({ request_id: 'req_ctx_other' }, () => signed.request('GET', '/v1/signed', { headers: { 'x-request-id': 'req_given' }, onBehalf: who }));
      const seen = upstream.seen.at(-1)!;
      expect(seen.url).toBe('/v1/signed');
      expect(seen.headers['x-request-id']).toBe('req_signed');
      expect(seen.rawHeaders.filter((h) => h.toLowerCase() === 'x-request-id')).toHaveLength(1);
      const token = String(seen.headers[INTERNAL_CREDENTIAL_HEADER]).replace(/^Bearer /, '');
      expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).toMatchObject({ aud: 'booking', iss: 'gateway' });
    } finally {
      signed.close();
    }
  });

  it('returns error statuses with their headers and body unchanged, without retrying them', async () => {
    const res = await client.request('GET', '/status/503');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.headers['x-internal']).toBe('yes');
    expect(res.body.toString()).toBe('{"error":{"code":"unavailable"}}');
    expect(upstream.hits('/status/503')).toBe(1);
    const bytes = await client.request('GET', '/bytes');
    expect(bytes.body.equals(Buffer.from([0xff, 0x00, 0xfe, 0x41]))).toBe(true);
  });

  it('reuses keep-alive connections for requests one after another', async () => {
    // undici frees a connection just after handing over an answer's last byte, so a request sent at
    // once after it may open a second one; from then on the pooled connections are reused.
    const before = upstream.connections();
    for (let i = 0; i < 20; i++) expect((await client.request('GET', `/v1/reuse/${i}`)).status).toBe(200);
    const ports = new Set(upstream.seen.filter((s) => s.url.startsWith('/v1/reuse/')).map((s) => s.remotePort));
    expect(ports.size).toBeLessThanOrEqual(2);
    expect(upstream.connections() - before).toBeLessThanOrEqual(2);
  });

  it('maps an answer slower than timeoutMs to kind timeout (504); a POST is tried once', async () => {
    const started = Date.now();
    const err = await failure(client.request('POST', '/slow/post', { body: '{}' }));
    expect(err.kind).toBe('timeout');
    expect(err.service).toBe('booking');
    expect(toUpstreamDomainError(err).status).toBe(504);
    expect(Date.now() - started).toBeLessThan(900);
    expect(upstream.hits('/slow/post')).toBe(1);
  });

  it('retries a timed-out GET once after 100 ms, as the got client did, then answers timeout', async () => {
    const started = Date.now();
    const err = await failure(client.request('GET', '/slow/get'));
    expect(err.kind).toBe('timeout');
    expect(upstream.hits('/slow/get')).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * 300 + 100 - 20);
  });

  it('times each attempt out at its own deadline when many run at once, the answered ones in between', async () => {
    const sent = (path: string) => {
      const started = performance.now();
      return client.request('POST', path, { body: '{}' }).then(
        (res) => ({ ok: true as const, status: res.status, after: performance.now() - started }),
        (err: unknown) => ({ ok: false as const, kind: (err as UpstreamError).kind, after: performance.now() - started }),
      );
    };
    const first = [sent('/slow/many-1'), sent('/v1/many-fast-1'), sent('/slow/many-2')];
    await new Promise((r) => setTimeout(r, 120));
    const second = [sent('/v1/many-fast-2'), sent('/slow/many-3'), sent('/v1/many-fast-3')];
    const [slow1, fast1, slow2, fast2, slow3, fast3] = await Promise.all([...first, ...second]);
    for (const fast of [fast1, fast2, fast3]) expect(fast).toMatchObject({ ok: true, status: 201 });
    for (const slow of [slow1, slow2, slow3]) {
      expect(slow).toMatchObject({ ok: false, kind: 'timeout' });
      // Never before its own deadline: the later attempt is not cut at the earlier ones' 300 ms.
      expect(slow!.after).toBeGreaterThanOrEqual(300 - 1);
    }
    // The slow answers would come after 1 s: each was cut by its timeout, not answered.
    for (const slow of [slow1, slow2, slow3]) expect(slow!.after).toBeLessThan(900);
  });

  it('with retryTimeouts false (the gateway), tries a timed-out GET once but still retries a reset one', async () => {
    const once = createForwardClient({ baseUrl: upstream.baseUrl, service: 'booking', timeoutMs: 300, retries: 1, retryTimeouts: false });
    try {
      const err = await failure(once.request('GET', '/slow/get-once'));
      expect(err.kind).toBe('timeout');
      expect(upstream.hits('/slow/get-once')).toBe(1);
      expect((await once.request('GET', '/reset-first/get-once')).status).toBe(200);
      expect(upstream.hits('/reset-first/get-once')).toBe(2);
    } finally {
      once.close();
    }
  });

  it('retries a GET whose connection was reset, and answers with the second attempt', async () => {
    const res = await client.request('GET', '/reset-first/get');
    expect(res.status).toBe(200);
    expect(upstream.hits('/reset-first/get')).toBe(2);
  });

  it('never retries a POST (nor a PATCH) after a reset: kind unreachable (502)', async () => {
    const err = await failure(client.request('POST', '/reset-first/post', { body: '{}' }));
    expect(err.kind).toBe('unreachable');
    expect(toUpstreamDomainError(err).status).toBe(502);
    expect(upstream.hits('/reset-first/post')).toBe(1);
    await failure(client.request('PATCH', '/reset-first/patch', { body: '{}' }));
    expect(upstream.hits('/reset-first/patch')).toBe(1);
  });

  it('gives up after one retry when the connection keeps being reset', async () => {
    const err = await failure(client.request('DELETE', '/reset/delete'));
    expect(err.kind).toBe('unreachable');
    expect(upstream.hits('/reset/delete')).toBe(2);
  });

  it('treats an answer cut off mid-body as unreachable (and retries it for a GET)', async () => {
    const err = await failure(client.request('GET', '/half'));
    expect(err.kind).toBe('unreachable');
    expect(upstream.hits('/half')).toBe(2);
  });

  it('refuses a body on HEAD without sending anything, as the got client did', async () => {
    const before = upstream.seen.length;
    const err = await failure(client.request('HEAD', '/v1/head', { body: '{}' }));
    expect(err.kind).toBe('unreachable');
    expect(upstream.seen.length).toBe(before);
  });

  it('sends the same requests as the got 11 reference client (line, headers, body), apart from accept-encoding', async () => {
    const server = await startCaptureServer(Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}'));
    const { baseUrl, captured } = server;
    const got = createGotReferenceClient({ baseUrl, timeoutMs: 500 });
    const fwd = createForwardClient({ baseUrl, timeoutMs: 500 });
    const shapes: Array<[string, string, { headers?: Record<string, string>; body?: string }]> = [
      ['GET', '/v1/bookings?status=confirmed&q=%20a', { headers: { 'x-request-id': 'r1', 'x-workspace-id': 'wsp_1' } }],
      ['GET', '/v1/event-types', { headers: { 'x-request-id': 'r1', 'content-type': 'application/json' }, body: '{"limit":5}' }],
      ['POST', '/v1/bookings', { headers: { 'x-request-id': 'r1', 'content-type': 'application/json' }, body: '{"name":"Zoë"}' }],
      ['POST', '/v1/bookings/bkg_1/cancel', { headers: { 'x-request-id': 'r1' } }],
      ['DELETE', '/v1/a/../b/%2e%2e/c?x=é', {}],
    ];
    try {
      for (const [method, path, opts] of shapes) {
        await runWithContext({ request_id: 'req_same' }, () => got.request(method as 'GET', path, { ...opts, raw: true }));
        expect(captured).toHaveLength(1);
        const viaGot = meaning(captured.splice(0).join(''));
        await runWithContext({ request_id: 'req_same' }, () => fwd.request(method, path, opts));
        expect(captured).toHaveLength(1);
        expect(meaning(captured.splice(0).join(''))).toEqual(viaGot);
      }
    } finally {
      got.close();
      fwd.close();
      await server.close();
    }
  });
});

describe('request target', () => {
  /** What got's prefixUrl gave: the base with a trailing slash, the path's leading slashes removed, WHATWG URL's pathname and search. */
  const viaUrl = (prefix: string, path: string) => {
    const url = new URL(prefix + path.replace(/^\/+/, ''));
    return url.pathname + url.search;
  };
  const outcome = (f: () => string) => {
    try {
      return f();
    } catch (err) {
      return `throws ${(err as Error).name}`;
    }
  };

  it('is the one WHATWG URL makes, for plain targets (joined as text) and every other (through URL)', () => {
    const prefixes = ['http://127.0.0.1:8082/', 'http://svc:1/api/', 'http://svc:1/a%2Fb/', 'http://svc/x?q=1/', 'http://svc/x#f/'];
    const samples = [
      '/v1/event-types/evt_1/slots?from=2035-01-01&to=2035-01-31&timezone=Europe%2FBerlin',
      '/v1/bookings',
      '/',
      '',
      '//v1/x',
      '/v1/a/../b',
      '/v1/%2e%2e/b',
      '/v1/./b',
      '/v1/a?',
      '/v1/a?x=é',
      "/v1/a?x='",
      '/v1/a b',
      '/v1/a#frag',
      '/v1/a\\b',
      '/v1/a\tb',
      '/v1/a?b=%zz&c=%',
      '/v1/a//b?c=d?e',
    ];
    // And random targets over the characters URL treats specially.
    const alphabet = ['/', '/', 'a', 'Z', '0', '.', '%', '2', 'e', 'E', '?', '#', ' ', "'", '"', '\\', '~', 'é', '\t', '\n', '<', '{', '`', '+', '&', '=', ':', '@', '!', '-', '_'];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 3000; i++) {
      let path = next() % 4 === 0 ? '' : '/';
      const length = next() % 14;
      for (let j = 0; j < length; j++) path += alphabet[next() % alphabet.length];
      samples.push(path);
    }
    let plain = 0;
    for (const prefix of prefixes) {
      const target = targetResolver(prefix);
      for (const path of samples) {
        expect({ prefix, path, target: outcome(() => target(path)) }).toEqual({ prefix, path, target: outcome(() => viaUrl(prefix, path)) });
        if (/^\/[^/]/.test(path) && !/[^A-Za-z0-9/?&=_~!$()*+,;:@%.-]/.test(path)) plain += 1;
      }
    }
    // The corpus has plain targets (the text join) as well as the rest.
    expect(plain).toBeGreaterThan(100);
  });
});

describe('internal client: the same requests as got', () => {
  it('sends json bodies, searchParams and headers as the got 11 client did (apart from accept-encoding), and reads answers alike', async () => {
    const answer = Buffer.from('{"n":"Zoë"}');
    const server = await startCaptureServer(
      Buffer.concat([Buffer.from(`HTTP/1.1 409 Conflict\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${answer.length}\r\n\r\n`), answer]),
    );
    const { baseUrl, captured } = server;
    const got = createGotReferenceClient({ baseUrl, timeoutMs: 500 });
    const ours = createInternalClient({ baseUrl, timeoutMs: 500 });
    const shapes: Array<[string, string, Parameters<typeof ours.request>[2]]> = [
      ['POST', '/internal/v1/workspaces/wsp_1/slot-check', { json: { event_type_id: 'evt_1', start_at: '2031-01-01T09:00:00.000Z', name: 'Zoë' } }],
      ['GET', '/internal/v1/workspaces/wsp_1/hosts/hst_1/busy', { searchParams: { from: '2031-01-01T00:00:00.000Z', to: 'a b&c', skip: undefined, n: 3, yes: true } }],
      ['GET', '/internal/x?old=1', { searchParams: { fresh: 'y' }, headers: { 'x-workspace-id': 'wsp_1' } }],
      ['DELETE', '/internal/v1/things/1', { headers: { 'content-type': 'text/plain' }, body: 'raw text' }],
    ];
    try {
      for (const [method, path, opts] of shapes) {
        const a = await runWithContext({ request_id: 'req_same' }, () => got.request(method as 'GET', path, opts));
        const viaGot = meaning(captured.splice(0).join(''));
        const b = await runWithContext({ request_id: 'req_same' }, () => ours.request(method as 'GET', path, opts));
        expect(meaning(captured.splice(0).join(''))).toEqual(viaGot);
        expect(b.status).toBe(a.status);
        expect(b.body).toEqual(a.body);
      }
    } finally {
      got.close();
      ours.close();
      await server.close();
    }
  });
});

describe('forward client: no usable server', () => {
  it('maps a refused connection to kind unreachable (502), after one retry for a GET only', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const dead = createForwardClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 500, retries: 1 });
    try {
      const started = Date.now();
      const err = await failure(dead.request('GET', '/x'));
      expect(err.kind).toBe('unreachable');
      expect(toUpstreamDomainError(err).status).toBe(502);
      // The GET was tried again after 100 ms (the POST never is: see the reset tests above).
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      expect((await failure(dead.request('POST', '/x', { body: '{}' }))).kind).toBe('unreachable');
    } finally {
      dead.close();
    }
  });

  it('maps an answer that is not HTTP to kind unreachable, without retrying it', async () => {
    const garbage = await startGarbage();
    const client = createForwardClient({ baseUrl: garbage.baseUrl, timeoutMs: 500, retries: 1 });
    try {
      const err = await failure(client.request('GET', '/x'));
      expect(err.kind).toBe('unreachable');
      expect(garbage.requests()).toBe(1);
    } finally {
      client.close();
      await garbage.stop();
    }
  });

  it('closes an idle pooled socket itself after its idle time, though the server would keep it longer (30 s by default, below the servers’ 65 s)', async () => {
    expect(IDLE_SOCKET_MS).toBe(30_000);
    const closedBy: string[] = [];
    const server = http.createServer((_req, res) => res.end('{}'));
    server.keepAliveTimeout = 65_000;
    // 'end' on the server's socket: the client closed its side.
    server.on('connection', (sock: net.Socket) => sock.on('end', () => closedBy.push('client')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const idle = createForwardClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, idleTimeoutMs: 200 });
    try {
      expect((await idle.request('GET', '/x')).status).toBe(200);
      // The client ends the connection after its 200 ms idle time, long before the server's 65 s.
      await waitFor(() => closedBy.length > 0, { timeoutMs: 5_000 });
      expect(closedBy).toEqual(['client']);
    } finally {
      idle.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
