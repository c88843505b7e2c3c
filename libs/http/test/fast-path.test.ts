import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestHandler } from 'express';
import { DomainError } from '@sched/contracts';
import { fastPath, inputGuard, sendData, type FastStep } from '../src';
import { testApp } from './test-app';

/**
 * fastPath takes exact plain GETs of its routes; the router takes the rest, e.g. the same path with a
 * trailing slash (which express matches too). Both must answer alike, metrics included. The app's own
 * server (listen()) runs the fast path before express (pre-express.ts); a plain node server on the same
 * app runs it as express middleware: all three must answer alike.
 */

const calls: string[] = [];
const show: RequestHandler = (req, res) => {
  calls.push(String(req.route?.path));
  sendData(res, 200, { params: { ...req.params }, proto: Object.getPrototypeOf(req.params) === null, query: req.query });
};
const fail: RequestHandler = () => {
  throw new DomainError('not_found');
};
const reject: RequestHandler = async () => {
  await Promise.resolve();
  throw new Error('boom at db.internal');
};
const refuse: FastStep = (_req, _res, done) => done(new DomainError('insufficient_scope', { details: [{ field: 'scope', issue: 'x:read' }] }));

let server: http.Server;
let port: number;
/** The same app behind a plain node server: every request through express (the fastPath middleware or the router). */
let viaExpress: http.Server;
let expressPort: number;
/** Requests that entered express (app.handle) on either server. */
let handled = 0;

beforeAll(async () => {
  const t = testApp();
  const routes = [
    { pattern: '/things/:id/parts/:part', steps: [inputGuard, show] },
    { pattern: '/things/:id', steps: [inputGuard, show] },
    { pattern: '/things/special', steps: [inputGuard, show] },
    { pattern: '/fail', steps: [inputGuard, fail] },
    { pattern: '/reject', steps: [inputGuard, reject] },
    { pattern: '/scoped/:id', steps: [refuse, inputGuard, show] },
  ];
  t.app.use(fastPath(routes));
  t.route('GET', '/things/:id/parts/:part', show);
  t.route('GET', '/things/:id', show);
  t.route('GET', '/things/special', show);
  t.route('GET', '/fail', fail);
  t.route('GET', '/reject', reject);
  t.route('GET', '/scoped/:id', { before: [refuse as RequestHandler] }, show);
  t.route('POST', '/things/:id', show);
  t.finalize();
  // express's entry point (not in its types): counts the requests that entered express.
  const entry = t.app as unknown as { handle: (...args: unknown[]) => unknown };
  const handle = entry.handle.bind(t.app);
  entry.handle = (...args: unknown[]) => {
    handled++;
    return handle(...args);
  };
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

function get(path: string, method = 'GET', to = port): Promise<{ status: number; headers: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: to, path, method, headers: { 'x-request-id': 'req_same' }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push(`${res.rawHeaders[i]}: ${/^date$/i.test(res.rawHeaders[i]!) ? '*' : res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function metricsFor(route: string): Promise<string[]> {
  const text = (await get('/metrics')).body;
  return text.split('\n').filter((l) => l.startsWith('http_requests_total') && l.includes(`route="${route}"`));
}

describe('fastPath', () => {
  it.each([
    ['/things/abc', '/things/:id'],
    ['/things/abc?x=1&y=%C3%A9', '/things/:id'],
    ['/things/special', '/things/:id'],
    ['/things/a-b_C9/parts/p1', '/things/:id/parts/:part'],
    ['/fail', '/fail'],
    ['/reject', '/reject'],
    ['/scoped/s1', '/scoped/:id'],
    ['/things/abc?bad=%ED%A0%80', '/things/:id'],
    ['/things/abc?nul=a%00b', '/things/:id'],
  ])('answers GET %s as the router does (route %s)', async (path, route) => {
    const [p, q] = path.split('?') as [string, string | undefined];
    const before = calls.length;
    const entered = handled;
    const preExpress = await get(path);
    // The pre-express path did not enter express at all.
    expect(handled).toBe(entered);
    const fast = await get(path, 'GET', expressPort);
    const routed = await get(`${p}/${q === undefined ? '' : `?${q}`}`);
    expect(handled).toBe(entered + 2);
    for (const other of [fast, routed]) {
      expect(preExpress.status).toBe(other.status);
      expect(preExpress.headers).toEqual(other.headers);
      expect(preExpress.body).toBe(other.body);
    }
    // Same handler reached (or not) all three ways, with the same route.
    expect(calls.slice(before).every((c) => c === route)).toBe(true);
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
    const preExpress = await series();
    await get('/scoped/s2', 'GET', expressPort);
    await get('/fail', 'GET', expressPort);
    const viaRouter = await series();
    const delta = (a: string[], b: string[]) => {
      const value = (lines: string[], name: string) => Number(lines.find((l) => l.startsWith(`${name} `))?.split(' ').at(-1) ?? 0);
      return b.map((l) => l.split(' ')[0]!).map((name) => `${name} ${value(b, name) - value(a, name)}`).filter((l) => !l.endsWith(' 0'));
    };
    expect(delta(base, preExpress)).toEqual(delta(preExpress, viaRouter));
    // 403 and 404, and the /metrics read in between.
    expect(delta(base, preExpress)).toHaveLength(3);
  });

  it('leaves other methods, bodies, escapes and case variants to the router', async () => {
    expect((await get('/things/abc', 'POST')).status).toBe(200);
    expect((await get('/things/abc', 'DELETE')).status).toBe(405);
    expect(JSON.parse((await get('/things/a%20b')).body).data.params).toEqual({ id: 'a b' });
    expect((await get('/THINGS/abc')).status).toBe(200);
    expect((await get('/nothing/here')).status).toBe(404);
  });

  it('refuses patterns it cannot match exactly', () => {
    expect(() => fastPath([{ pattern: '/files/*rest', steps: [] }])).toThrow(/literal/);
    expect(() => fastPath([{ pattern: 'no-slash', steps: [] }])).toThrow(/literal/);
  });
});
