import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { DomainError } from '@sched/contracts';
import { parseQuery, sendData, type FastStep } from '../src';
import { testApp } from './test-app';

/**
 * The fast path takes exact plain GETs of its routes before express; express takes the rest, e.g. the
 * same path with a trailing slash (which the router matches too). The app's own server (listen()) has
 * the fast path; a plain node server on the same express app routes everything: all three must answer
 * alike, metrics included, and the fast path must never hand its requests to express.
 */

const calls: string[] = [];
/**
 * Who ran each request's first step: express (its app.handle gives every response `res.locals`) or the
 * fast path (node's listener; the response is born with express's prototype but express never saw it).
 */
const kinds: string[] = [];
const anyQuery = z.record(z.string(), z.string());
const show =
  (route: string): FastStep =>
  (req, res) => {
    calls.push(route);
    sendData(res, 200, { params: { ...req.params }, proto: Object.getPrototypeOf(req.params) === null, query: parseQuery(anyQuery, req) });
  };
const fail: FastStep = () => {
  throw new DomainError('not_found');
};
const reject: FastStep = async () => {
  await Promise.resolve();
  throw new Error('boom at db.internal');
};
const echo: FastStep = (req, res) => {
  calls.push('POST /things/:id');
  sendData(res, 201, { params: { ...req.params }, body: req.body ?? null });
};
const refuse: FastStep = (_req, _res, done) => done(new DomainError('insufficient_scope', { details: [{ field: 'scope', issue: 'x:read' }] }));
/** Runs before routing on both paths (the fast path's `before`, an app-level middleware in express). */
const observe: FastStep = (_req, res, next) => {
  kinds.push(Object.hasOwn(res, 'locals') ? 'express' : 'node');
  next();
};

let server: http.Server;
let port: number;
/** The same express app behind a plain node server: every request through the router. */
let viaExpress: http.Server;
let expressPort: number;

beforeAll(async () => {
  const t = testApp();
  const parts = show('/things/:id/parts/:part');
  const thing = show('/things/:id');
  const special = show('/things/special');
  const scoped = show('/scoped/:id');
  t.app.use(observe);
  t.route('GET', '/things/:id/parts/:part', parts);
  t.route('GET', '/things/:id', thing);
  t.route('GET', '/things/special', special);
  t.route('GET', '/fail', fail);
  t.route('GET', '/reject', reject);
  t.route('GET', '/scoped/:id', { before: [refuse] }, scoped);
  // A POST route's steps are the whole list the router runs (body parser and input guard included).
  const post = t.route('POST', '/things/:id', echo);
  t.fastPath({
    routes: [
      { pattern: '/things/:id/parts/:part', steps: [parts] },
      { pattern: '/things/:id', steps: [thing] },
      { pattern: '/things/special', steps: [special] },
      { pattern: '/fail', steps: [fail] },
      { pattern: '/reject', steps: [reject] },
      { pattern: '/scoped/:id', steps: [refuse, scoped] },
      { method: 'POST', pattern: '/things/:id', steps: post },
    ],
    before: [observe],
  });
  t.finalize();
  server = await t.listen(0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
  viaExpress = http.createServer(t.app);
  await new Promise<void>((r) => viaExpress.listen(0, '127.0.0.1', r));
  expressPort = (viaExpress.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => viaExpress.close(() => r()));
});

function get(path: string, method = 'GET', to = port, extra: Record<string, string> = {}, body?: Buffer | Buffer[]): Promise<{ status: number; headers: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: to, path, method, headers: { 'x-request-id': 'req_same', ...extra }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push(`${res.rawHeaders[i]}: ${/^date$/i.test(res.rawHeaders[i]!) ? '*' : res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers, body });
      });
    });
    req.on('error', reject);
    // Several pieces: sent as they are (chunked, unless a content-length is given).
    if (Array.isArray(body)) for (const piece of body) req.write(piece);
    req.end(Array.isArray(body) ? undefined : body);
  });
}

async function metricsFor(route: string): Promise<string[]> {
  const text = (await get('/metrics')).body;
  return text.split('\n').filter((l) => l.startsWith('http_requests_total') && l.includes(`route="${route}"`));
}

describe('fast path', () => {
  it.each([
    ['/things/abc', '/things/:id', 'node'],
    ['/things/abc?x=1&y=%2F', '/things/:id', 'node'],
    ['/things/special', '/things/:id', 'node'],
    ['/things/a-b_C9/parts/p1', '/things/:id/parts/:part', 'node'],
    ['/fail', '/fail', 'node'],
    ['/reject', '/reject', 'node'],
    ['/scoped/s1', '/scoped/:id', 'node'],
    // Escapes the input guard must look at (anything but ASCII): express's, where the guard runs.
    ['/things/abc?x=1&y=%C3%A9', '/things/:id', 'express'],
    ['/things/abc?bad=%ED%A0%80', '/things/:id', 'express'],
    ['/things/abc?nul=a%00b', '/things/:id', 'express'],
  ])('answers GET %s as the router does (route %s, served by %s)', async (path, route, kind) => {
    const [p, q] = path.split('?') as [string, string | undefined];
    const before = calls.length;
    const seen = kinds.length;
    const fast = await get(path);
    const direct = await get(path, 'GET', expressPort);
    const routed = await get(`${p}/${q === undefined ? '' : `?${q}`}`);
    // The fast path's request never entered express; the others did.
    expect(kinds.slice(seen)).toEqual([kind, 'express', 'express']);
    for (const other of [direct, routed]) {
      expect(fast.status).toBe(other.status);
      expect(fast.headers).toEqual(other.headers);
      expect(fast.body).toBe(other.body);
    }
    // Same handler reached (or not) all three ways, with the same route.
    expect(calls.slice(before).every((c) => c === route)).toBe(true);
  });

  it('answers conditional requests as the router does', async () => {
    const conditions: Array<Record<string, string>> = [{ 'if-none-match': '*' }, { 'if-modified-since': new Date().toUTCString() }, { 'if-none-match': '"x"' }];
    for (const headers of conditions) {
      const seen = kinds.length;
      const fast = await get('/things/abc', 'GET', port, headers);
      const direct = await get('/things/abc', 'GET', expressPort, headers);
      expect(kinds.slice(seen)).toEqual(['node', 'express']);
      expect(fast.status).toBe(direct.status);
      expect(fast.headers).toEqual(direct.headers);
      expect(fast.body).toBe(direct.body);
    }
  });

  it('labels the metrics by route pattern on both paths', async () => {
    const before = await metricsFor('/things/:id/parts/:part');
    await get('/things/m/parts/n');
    await get('/things/m/parts/n', 'GET', expressPort);
    await get('/things/m/parts/n/');
    const after = await metricsFor('/things/:id/parts/:part');
    const count = (lines: string[]) => lines.reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    expect(count(after) - count(before)).toBe(3);
    // Errors before and after the route is entered: the same series (status, route) on each path.
    const series = async () => (await get('/metrics')).body.split('\n').filter((l) => l.startsWith('http_requests_total'));
    const base = await series();
    await get('/scoped/s2');
    await get('/fail');
    const fast = await series();
    await get('/scoped/s2', 'GET', expressPort);
    await get('/fail', 'GET', expressPort);
    const viaRouter = await series();
    const delta = (a: string[], b: string[]) => {
      const value = (lines: string[], name: string) => Number(lines.find((l) => l.startsWith(`${name} `))?.split(' ').at(-1) ?? 0);
      return b.map((l) => l.split(' ')[0]!).map((name) => `${name} ${value(b, name) - value(a, name)}`).filter((l) => !l.endsWith(' 0'));
    };
    expect(delta(base, fast)).toEqual(delta(fast, viaRouter));
    // 403 and 404, and the /metrics read in between.
    expect(delta(base, fast)).toHaveLength(3);
  });

  it('leaves other methods, bodies, escapes and case variants to the router', async () => {
    const seen = kinds.length;
    expect((await get('/things/abc/parts/p', 'POST')).status).toBe(405);
    expect((await get('/things/abc', 'DELETE')).status).toBe(405);
    expect((await get('/things/abc', 'HEAD')).status).toBe(200);
    expect((await get('/things/abc', 'GET', port, { 'content-length': '0' })).status).toBe(200);
    expect(JSON.parse((await get('/things/a%20b')).body).data.params).toEqual({ id: 'a b' });
    expect((await get('/THINGS/abc')).status).toBe(200);
    expect((await get('/nothing/here')).status).toBe(404);
    // Empty segments and dot segments: the router decides what they match.
    for (const path of ['//things/abc', '/things//abc', '/things/abc//', '/', '/things/./abc', '/things/a.b']) await get(path);
    expect(kinds.slice(seen).every((k) => k === 'express')).toBe(true);
    expect(kinds.length - seen).toBe(13);
  });

  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const TYPE = { 'content-type': 'application/json' };
  it.each<[string, Record<string, string>, Buffer | Buffer[] | undefined, number]>([
    ['a JSON body', TYPE, json({ name: 'Café 東京', n: [1, 2.5e3, null], o: { deep: true } }), 201],
    ['no body', {}, undefined, 201],
    ['an empty body with a content-length', { ...TYPE, 'content-length': '0' }, Buffer.alloc(0), 201],
    ['a chunked body', TYPE, [Buffer.from('{"a":'), Buffer.from('"b"}')], 201],
    ['an empty chunked body', TYPE, [Buffer.alloc(0)], 201],
    ['a body that is only a byte order mark', TYPE, Buffer.from([0xef, 0xbb, 0xbf]), 201],
    ['a body after a byte order mark', { 'content-type': 'application/json; charset=utf-8' }, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json({ a: 1 })]), 201],
    ['a gzip body', { ...TYPE, 'content-encoding': 'gzip' }, gzipSync(json({ zipped: true })), 201],
    ['an unknown content-encoding', { ...TYPE, 'content-encoding': 'snappy' }, json({ a: 1 }), 415],
    ['a vendor JSON type', { 'content-type': 'application/vnd.x+json' }, json({ a: 1 }), 201],
    ['a body that is not JSON', { 'content-type': 'text/plain' }, Buffer.from('hello'), 415],
    ['a charset other than UTF-8', { 'content-type': 'application/json; charset=utf-16' }, json({ a: 1 }), 415],
    ['a body over the limit (by its length)', TYPE, Buffer.alloc(65 * 1024, 0x20), 413],
    ['a body over the limit (chunked)', TYPE, [Buffer.alloc(40 * 1024, 0x20), Buffer.alloc(40 * 1024, 0x20)], 413],
    ['malformed JSON', TYPE, Buffer.from('{"a":'), 400],
    ['a JSON text that is not an object or array', TYPE, Buffer.from(' "text"'), 400],
    ['bytes that are not UTF-8', TYPE, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 400],
    ['nesting deeper than the limit', TYPE, Buffer.from(`${'['.repeat(65)}${']'.repeat(65)}`), 400],
    ['a NUL in a string (the input guard)', TYPE, Buffer.from('{"a":"x\\u0000y"}'), 400],
  ])('answers a POST with %s as the router does, on the fast path', async (_name, headers, body, status) => {
    const before = calls.length;
    const seen = kinds.length;
    const fast = await get('/things/abc', 'POST', port, headers, body);
    const direct = await get('/things/abc', 'POST', expressPort, headers, body);
    const routed = await get('/things/abc/', 'POST', port, headers, body);
    expect(fast.status).toBe(status);
    expect(kinds.slice(seen)).toEqual(['node', 'express', 'express']);
    for (const other of [direct, routed]) {
      expect(fast.status).toBe(other.status);
      expect(fast.headers).toEqual(other.headers);
      expect(fast.body).toBe(other.body);
    }
    expect(calls.slice(before)).toEqual(fast.status === 201 ? ['POST /things/:id', 'POST /things/:id', 'POST /things/:id'] : []);
  });

  it('takes a POST with a plain query, and leaves one with escapes the input guard must read to the router', async () => {
    const seen = kinds.length;
    const plain = await get('/things/abc?x=1', 'POST', port, TYPE, json({ a: 1 }));
    const escaped = await get('/things/abc?x=%C3%A9', 'POST', port, TYPE, json({ a: 1 }));
    expect([plain.status, escaped.status]).toEqual([201, 201]);
    expect(kinds.slice(seen)).toEqual(['node', 'express']);
  });

  it('refuses patterns it cannot match exactly, and a route of another method than GET without the body parser', () => {
    const t = testApp();
    expect(() => t.fastPath({ routes: [{ pattern: '/files/*rest', steps: [] }] })).toThrow(/literal/);
    expect(() => t.fastPath({ routes: [{ pattern: 'no-slash', steps: [] }] })).toThrow(/literal/);
    expect(() => t.fastPath({ routes: [{ method: 'POST', pattern: '/things/:id', steps: [echo] }] })).toThrow(/body parser and input guard/);
  });
});
