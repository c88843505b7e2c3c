import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from '../src';
import { testApp } from './test-app';

/**
 * The app's server makes requests and responses with express's prototypes already in place
 * (express-messages.ts), on the fast path and through the router alike, and they stay node's objects.
 */
describe('requests and responses born express\'s', () => {
  const seen: Array<{ route: string; req: IncomingMessage; res: ServerResponse }> = [];
  const t = testApp();
  t.fastPath({
    routes: [
      {
        pattern: '/fast',
        steps: [
          (req, res) => {
            seen.push({ route: 'fast', req, res });
            sendJson(res, 200, { ok: true });
          },
        ],
      },
    ],
  });
  t.route('GET', '/fast', (_req, res) => void res.json({ ok: 'router' }));
  t.route('POST', '/routed', (req, res) => {
    seen.push({ route: 'routed', req, res });
    res.status(201).json({ got: req.body as unknown });
  });
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    server = await t.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  it('has app.request / app.response as prototypes from birth, and node\'s classes behind them', async () => {
    const fast = await fetch(`${base}/fast`);
    expect(fast.status).toBe(200);
    expect(await fast.json()).toEqual({ ok: true });
    const routed = await fetch(`${base}/routed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(routed.status).toBe(201);
    expect(await routed.json()).toEqual({ got: { a: 1 } });

    expect(seen.map((s) => s.route)).toEqual(['fast', 'routed']);
    for (const { req, res } of seen) {
      expect(Object.getPrototypeOf(req)).toBe(t.app.request);
      expect(Object.getPrototypeOf(res)).toBe(t.app.response);
      expect(req).toBeInstanceOf(http.IncomingMessage);
      expect(res).toBeInstanceOf(http.ServerResponse);
      expect(res.req).toBe(req);
    }
  });
});
