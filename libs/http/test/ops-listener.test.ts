import type { AddressInfo } from 'node:net';
import { sendData } from '../src';
import { testApp } from './test-app';

const portOf = (server: { address(): unknown }) => (server.address() as AddressInfo).port;

describe('separateOps: /readyz and /metrics on an operations listener only', () => {
  it('keeps /healthz and the routes on the main port, answers /readyz and /metrics there with the 404 envelope', async () => {
    const t = testApp({ separateOps: true, readiness: { postgres: async () => 1 } });
    t.route('GET', '/v1/things', (_req, res) => sendData(res, 200, { ok: true }));
    const main = `http://127.0.0.1:${portOf(await t.listen(0, '127.0.0.1'))}`;
    const ops = `http://127.0.0.1:${portOf(await t.listenOps(0, '127.0.0.1'))}`;
    try {
      expect((await fetch(`${main}/healthz`)).status).toBe(200);
      expect((await fetch(`${main}/v1/things`)).status).toBe(200);
      for (const path of ['/readyz', '/metrics']) {
        const res = await fetch(`${main}${path}`);
        expect(res.status).toBe(404);
        const body = (await res.json()) as { error: { code: string }; meta: { request_id: string } };
        expect(body.error.code).toBe('not_found');
        expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
      }

      expect((await fetch(`${ops}/healthz`)).status).toBe(200);
      const ready = await fetch(`${ops}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { data: unknown }).data).toEqual({ status: 'ready', checks: { postgres: 'ok' }, failed: [] });
      const metrics = await fetch(`${ops}/metrics`);
      expect(metrics.headers.get('content-type')).toMatch(/text\/plain/);
      // One registry for both listeners: the main port's requests are counted in the scrape.
      expect(await metrics.text()).toMatch(/http_requests_total\{[^}]*route="\/v1\/things"/);
      // Nothing else on the operations port: not the app's routes, not other methods.
      expect((await fetch(`${ops}/v1/things`)).status).toBe(404);
      const post = await fetch(`${ops}/readyz`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    } finally {
      await t.close();
    }
    await expect(fetch(`${ops}/healthz`)).rejects.toThrow();
  });

  it('serves all three on the main port without the option, and refuses listenOps()', async () => {
    const t = testApp({ readiness: {} });
    const main = `http://127.0.0.1:${portOf(await t.listen(0, '127.0.0.1'))}`;
    try {
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${main}${path}`)).status).toBe(200);
      expect(() => t.listenOps(0, '127.0.0.1')).toThrow(/separateOps/);
    } finally {
      await t.close();
    }
  });
});
