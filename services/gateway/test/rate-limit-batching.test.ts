import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createHttpApp, sendData, type HttpApp } from '@sched/http';
import { createLogger } from '@sched/logger';
import type { AddRequests } from '../src/domain/counter-batcher';
import { apiKeyAuth } from '../src/http/api-key-auth.middleware';

/** The /v1 auth and rate-limit step in front of one route, with a counter store the test controls. */
async function startLimitedApp(addRequests: AddRequests, limit: number) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => c.toString().split('\n').filter(Boolean).forEach((l) => lines.push(JSON.parse(l) as Record<string, unknown>)));
  const logger = createLogger({ service: 'gateway', stream });
  let authenticated = 0;
  const http: HttpApp = createHttpApp({ service: 'gateway', logger });
  http.app.use(
    '/v1',
    apiKeyAuth({
      authenticate: async () => {
        authenticated++;
        return { id: 'key_1', workspaceId: 'wsp_1', scopes: [], expiresAt: null, revokedAt: null, rateLimit: { limit, windowSeconds: 60 } };
      },
      addRequests,
      defaultPolicy: { limit: 100, windowSeconds: 10 },
      logger,
    }),
  );
  http.route('GET', '/v1/ping', (_req, res) => sendData(res, 200, { ok: true }));
  const server = await http.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/ping`;
  return { url, lines, authenticated: () => authenticated, close: () => http.close() };
}

/** Resolves when `cond` holds, checking after each turn of the event loop. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('rate limiting with batched counter upserts', () => {
  it('gives each request of a batch its own exact count: the first ones pass, the later ones get 429', async () => {
    const calls: number[] = [];
    const first = gate();
    let total = 0;
    const app = await startLimitedApp(async (_key, _window, n) => {
      calls.push(n);
      if (calls.length === 1) await first.opened;
      total += n;
      return total;
    }, 3);
    try {
      const answers = Array.from({ length: 6 }, () => fetch(app.url, { headers: { authorization: 'Bearer x' } }));
      // All six are counted while the first upsert is still in flight; then it ends.
      await until(() => app.authenticated() === 6);
      await new Promise((r) => setImmediate(r));
      first.open();
      const res = await Promise.all(answers);
      expect(calls).toEqual([1, 5]);
      expect(res.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429, 429]);
      expect(res.map((r) => r.headers.get('ratelimit-remaining')).sort()).toEqual(['0', '0', '0', '0', '1', '2']);
      for (const r of res.filter((x) => x.status === 429)) {
        expect(r.headers.get('ratelimit-limit')).toBe('3');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
      }
    } finally {
      await app.close();
    }
  });

  it('lets a whole failed batch through with full headers, logs it once, and counts the next batch again', async () => {
    const calls: number[] = [];
    const first = gate();
    let total = 0;
    const app = await startLimitedApp(async (_key, _window, n) => {
      calls.push(n);
      if (calls.length === 1) {
        await first.opened;
        throw new Error('connection terminated unexpectedly');
      }
      total += n;
      return total;
    }, 2);
    try {
      const lone = fetch(app.url, { headers: { authorization: 'Bearer x' } });
      await until(() => app.authenticated() === 1);
      const queued = Array.from({ length: 4 }, () => fetch(app.url, { headers: { authorization: 'Bearer x' } }));
      await until(() => app.authenticated() === 5);
      await new Promise((r) => setImmediate(r));
      first.open();
      // The lone (failed) request is let through; the four behind it are one batch, counted 1..4 of 2.
      const failedOpen = await lone;
      expect(failedOpen.status).toBe(200);
      expect(failedOpen.headers.get('ratelimit-remaining')).toBe('2');
      const res = await Promise.all(queued);
      expect(calls).toEqual([1, 4]);
      expect(res.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
      await new Promise((r) => setImmediate(r));
      const errors = app.lines.filter((l) => l.message === 'rate limit counter unavailable; request allowed');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ level: 'error', requests: 1 });
    } finally {
      await app.close();
    }
  });

  it('logs a failed batch of many requests once, not once per request', async () => {
    const calls: number[] = [];
    const first = gate();
    const app = await startLimitedApp(async (_key, _window, n) => {
      calls.push(n);
      if (calls.length === 1) await first.opened;
      throw new Error('counter store down');
    }, 2);
    try {
      const answers = Array.from({ length: 5 }, () => fetch(app.url, { headers: { authorization: 'Bearer x' } }));
      await until(() => app.authenticated() === 5);
      await new Promise((r) => setImmediate(r));
      first.open();
      const res = await Promise.all(answers);
      expect(calls).toEqual([1, 4]);
      // Fail open: every request allowed, headers as if nothing was counted.
      expect(res.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(res.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['2', '2', '2', '2', '2']);
      await new Promise((r) => setImmediate(r));
      const errors = app.lines.filter((l) => l.message === 'rate limit counter unavailable; request allowed');
      expect(errors.map((e) => e.requests)).toEqual([1, 4]);
      // Each line carries the id of a request of its batch.
      expect(errors.every((e) => typeof e.request_id === 'string')).toBe(true);
    } finally {
      await app.close();
    }
  });
});
