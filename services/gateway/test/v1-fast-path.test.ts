import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, type RunningGateway } from './support/gateway-harness';

/**
 * The fast path (v1-fast-path.ts) takes exact, plain v1 GETs before express; the router takes
 * everything else, e.g. the same path with a trailing slash. The gateway's own server has the fast
 * path; a plain node server on the same express app routes the exact path too: all three must answer
 * byte for byte alike.
 */

const JSON_UTF8 = 'application/json; charset=utf-8';
const BODIES: Record<string, { type?: string; body: Buffer; status?: number }> = {
  '/v1/event-types/evt_utf8/slots': { type: JSON_UTF8, body: Buffer.from(JSON.stringify({ data: [{ name: 'Café 東京 🎉' }], meta: { request_id: 'x' } })) },
  '/v1/event-types/evt_plain': { type: 'application/json', body: Buffer.from('{"data":{"id":"evt_plain"}}') },
  '/v1/event-types/evt_bad_utf8': { type: JSON_UTF8, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
  '/v1/event-types/evt_none': { body: Buffer.from('plain text') },
  '/v1/bookings/bkg_gone': { type: JSON_UTF8, status: 404, body: Buffer.from('{"error":{"code":"not_found","message":"Not found.","details":[]},"meta":{"request_id":"x"}}') },
  '/v1/bookings/bkg_empty': { type: JSON_UTF8, status: 204, body: Buffer.alloc(0) },
};

let db: TestDatabase;
let upstream: http.Server;
let gw: RunningGateway;
let key: string;
let narrowKey: string;
const seen: string[] = [];
/** What the upstream received with each request: its body and the headers the gateway adds. */
const received: Array<{ url: string; body: string; idempotencyKey?: string; contentType?: string }> = [];
/** The gateway's express app behind a plain node server (no fast path). */
let viaExpress: http.Server;
let expressUrl: string;
/** Requests the gateway's fast path has taken (its metric). */
const fastPathTotal = async () => (await gw.service.http.registry.getSingleMetric('http_fast_path_requests_total')!.get()).values[0]?.value ?? 0;

async function apiKey(ws: string, scopes: string[]): Promise<string> {
  const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, { token: ADMIN_TOKEN, json: { name: 'k', scopes, rate_limit: { limit: 100000, window_seconds: 60 } } });
  return res.body.data.key;
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  upstream = http.createServer((req, res) => {
    seen.push(req.url!);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      received.push({ url: req.url!, body: Buffer.concat(chunks).toString(), idempotencyKey, contentType: req.headers['content-type'] });
    });
    const path = req.url!.split('?')[0]!.replace(/\/$/, '');
    const answer = BODIES[path] ?? { type: JSON_UTF8, body: Buffer.from(JSON.stringify({ data: { ok: true }, meta: { request_id: req.headers['x-request-id'] } })) };
    res.statusCode = answer.status ?? 200;
    if (answer.type) res.setHeader('content-type', answer.type);
    res.setHeader('retry-after', '7');
    res.end(answer.body);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  gw = await startGateway(db, `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  viaExpress = http.createServer(gw.service.http.app);
  await new Promise<void>((r) => viaExpress.listen(0, '127.0.0.1', r));
  expressUrl = `http://127.0.0.1:${(viaExpress.address() as AddressInfo).port}`;
  const ws = (await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Fast' } })).body.data.id;
  key = await apiKey(ws, ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read']);
  narrowKey = await apiKey(ws, ['bookings:read']);
});

afterAll(async () => {
  await new Promise<void>((r) => viaExpress.close(() => r()));
  await gw.close();
  await new Promise<void>((r) => upstream.close(() => r()));
  await db.drop();
});

interface Raw {
  status: number;
  headers: string[];
  body: Buffer;
}

function get(path: string, headers: Record<string, string>, method = 'GET', base = gw.url, body?: Buffer): Promise<Raw> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const out: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!;
          // The clock and the count in the window move between the requests (and so may a 429's wait); their presence and place do not.
          const value = /^(date|ratelimit-remaining|ratelimit-reset)$/i.test(name) || (name.toLowerCase() === 'retry-after' && res.statusCode === 429) ? '*' : res.rawHeaders[i + 1];
          out.push(`${name}: ${value}`);
        }
        resolve({ status: res.statusCode!, headers: out, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The same request on the gateway's server (exact path: the fast path takes it when `taken`), through
 * express on the exact path, and through the router's trailing-slash variant. The first two must
 * answer alike here; the caller compares the first and the last.
 */
async function both(path: string, headers: Record<string, string>, method = 'GET', taken = method !== 'HEAD', body?: Buffer): Promise<[Raw, Raw]> {
  const [p, q] = path.split('?') as [string, string | undefined];
  const viaRouter = `${p}/${q === undefined ? '' : `?${q}`}`;
  const sent = { ...headers, 'x-request-id': 'req_same' };
  const before = await fastPathTotal();
  const fast = await get(path, sent, method, gw.url, body);
  expect(await fastPathTotal()).toBe(before + (taken ? 1 : 0));
  const direct = await get(path, sent, method, expressUrl, body);
  expect(fast.status).toBe(direct.status);
  expect(fast.headers).toEqual(direct.headers);
  expect(fast.body.equals(direct.body)).toBe(true);
  return [fast, await get(viaRouter, sent, method, gw.url, body)];
}

describe('the v1 fast path', () => {
  it.each([
    '/v1/event-types/evt_utf8/slots?from=2026-11-23&to=2026-12-23&timezone=Europe%2FBerlin',
    '/v1/event-types/evt_plain',
    '/v1/event-types/evt_bad_utf8',
    '/v1/event-types/evt_none',
    '/v1/event-types',
    '/v1/bookings?limit=5',
    '/v1/bookings/bkg_gone',
    '/v1/bookings/bkg_empty',
    '/v1/booking-invitations/biv_1',
  ])('answers GET %s as the router does', async (path) => {
    const before = seen.length;
    const [fast, routed] = await both(path, { authorization: `Bearer ${key}` });
    expect(fast.status).toBe(routed.status);
    expect(fast.headers).toEqual(routed.headers);
    expect(fast.body.equals(routed.body)).toBe(true);
    // All three were forwarded, each with its own path as received.
    expect(seen.slice(before)).toHaveLength(3);
  });

  it.each([
    ['no key', {}, '/v1/event-types/evt_1/slots', true],
    ['a malformed key', { authorization: 'Bearer nope' }, '/v1/event-types/evt_1', true],
    ['a key without the scope', 'narrow', '/v1/event-types/evt_1/slots', true],
    // Escapes the input guard must look at: express's, where the guard runs.
    ['a query that is not UTF-8', 'full', '/v1/event-types/evt_1/slots?from=%ED%A0%80', false],
    ['a NUL in the query', 'full', '/v1/bookings?cursor=a%00b', false],
  ] as const)('answers %s exactly as the router does, without forwarding', async (_name, who, path, taken) => {
    const headers = who === 'narrow' ? { authorization: `Bearer ${narrowKey}` } : who === 'full' ? { authorization: `Bearer ${key}` } : who;
    const before = seen.length;
    const [fast, routed] = await both(path, headers, 'GET', taken);
    expect(fast.status).toBeGreaterThanOrEqual(400);
    expect(fast.status).toBe(routed.status);
    expect(fast.headers).toEqual(routed.headers);
    expect(fast.body.equals(routed.body)).toBe(true);
    expect(seen.length).toBe(before);
  });

  const JSON_TYPE = { 'content-type': 'application/json' };
  const booking = Buffer.from(JSON.stringify({ event_type_id: 'evt_1', start_at: '2035-01-01T12:00:00Z', guest: { name: 'Zoë', email: 'z@example.com', timezone: 'Europe/Berlin' }, metadata: { n: 1.5e3 } }));
  it.each<[string, string, Record<string, string>, Buffer | undefined, number]>([
    ['a Booking', '/v1/bookings', { ...JSON_TYPE, 'idempotency-key': 'idem-1' }, booking, 200],
    ['a cancel without a body', '/v1/bookings/bkg_1/cancel', { 'idempotency-key': 'idem-2' }, undefined, 200],
    ['a body that is not JSON', '/v1/bookings', { 'content-type': 'text/plain' }, Buffer.from('x'), 415],
    ['a body over 64 KiB', '/v1/bookings', JSON_TYPE, Buffer.alloc(65 * 1024, 0x20), 413],
    ['malformed JSON', '/v1/bookings', JSON_TYPE, Buffer.from('{"event_type_id":'), 400],
    ['a NUL in the body', '/v1/bookings', JSON_TYPE, Buffer.from('{"guest":{"name":"a\\u0000b"}}'), 400],
  ])('answers POST with %s as the router does, on the fast path', async (_name, path, headers, body, status) => {
    const before = received.length;
    const [fast, routed] = await both(path, { ...headers, authorization: `Bearer ${key}` }, 'POST', true, body);
    expect(fast.status).toBe(status);
    expect(fast.status).toBe(routed.status);
    expect(fast.headers).toEqual(routed.headers);
    expect(fast.body.equals(routed.body)).toBe(true);
    // Forwarded alike all three ways (or not at all): the body as JSON text, the Idempotency-Key.
    // (The stub upstream answers 200 to everything.)
    await new Promise((r) => setTimeout(r, 50));
    const got = received.slice(before);
    expect(got).toHaveLength(status === 200 ? 3 : 0);
    for (const r of got) expect({ ...r, url: r.url.replace(/\/$/, '') }).toEqual({ ...got[0]!, url: path });
    if (body && status === 200) expect(JSON.parse(got[0]!.body)).toEqual(JSON.parse(body.toString()));
    if (status === 200) expect(got[0]!.idempotencyKey).toBe(headers['idempotency-key']);
  });

  it.each([
    ['no key', {}],
    ['a key without the scope', 'narrow'],
  ] as const)('answers a POST with %s exactly as the router does, without forwarding', async (_name, who) => {
    const headers = who === 'narrow' ? { authorization: `Bearer ${narrowKey}` } : who;
    const before = seen.length;
    const [fast, routed] = await both('/v1/bookings', { ...headers, ...JSON_TYPE }, 'POST', true, booking);
    expect([401, 403]).toContain(fast.status);
    expect(fast.status).toBe(routed.status);
    expect(fast.headers).toEqual(routed.headers);
    expect(fast.body.equals(routed.body)).toBe(true);
    expect(seen.length).toBe(before);
  });

  it('passes conditional and HEAD requests on as the router does', async () => {
    for (const [method, headers] of [
      ['GET', { 'if-none-match': '*' }],
      ['GET', { 'if-modified-since': new Date().toUTCString() }],
      ['HEAD', {}],
    ] as const) {
      const [fast, routed] = await both('/v1/event-types/evt_utf8/slots', { ...headers, authorization: `Bearer ${key}` }, method);
      expect(fast.status).toBe(routed.status);
      expect(fast.headers).toEqual(routed.headers);
      expect(fast.body.equals(routed.body)).toBe(true);
    }
  });

  it('answers 429 exactly as the router does', async () => {
    const ws = (await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Limited' } })).body.data.id;
    const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, { token: ADMIN_TOKEN, json: { name: 'k', scopes: ['slots:read'], rate_limit: { limit: 1, window_seconds: 3600 } } });
    const headers = { authorization: `Bearer ${res.body.data.key as string}` };
    expect((await get('/v1/event-types/evt_1/slots', headers)).status).toBe(200);
    const before = seen.length;
    const [fast, routed] = await both('/v1/event-types/evt_1/slots', headers);
    expect(fast.status).toBe(429);
    expect(fast.headers.some((h) => h.startsWith('Retry-After: '))).toBe(true);
    expect(fast.headers).toEqual(routed.headers);
    expect(fast.body.equals(routed.body)).toBe(true);
    expect(seen.length).toBe(before);
  });

  it('counts each request once against the rate limit', async () => {
    const ws = (await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Counted' } })).body.data.id;
    const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, { token: ADMIN_TOKEN, json: { name: 'k', scopes: ['event_types:read'], rate_limit: { limit: 3, window_seconds: 60 } } });
    const limited = res.body.data.key as string;
    const remaining: string[] = [];
    for (const path of ['/v1/event-types', '/v1/event-types/', '/v1/event-types', '/v1/event-types']) {
      const r = await get(path, { authorization: `Bearer ${limited}` });
      remaining.push(`${r.status}`);
    }
    expect(remaining).toEqual(['200', '200', '200', '429']);
  });
});
