import request from 'supertest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendData } from '../src';
import { testApp } from './test-app';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: new http.Agent({ keepAlive: true }) }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** `/slow` answers after delayMs, or when `release` is called, whichever comes first. */
async function startSlowApp(delayMs: number, shutdownTimeoutMs = 5000) {
  const t = testApp({ shutdownTimeoutMs });
  const pending = new Set<() => void>();
  const arrivals = new Set<() => void>();
  t.route('GET', '/slow', async (_req, res) => {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        pending.delete(done);
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      pending.add(done);
      arrivals.forEach((arrived) => arrived());
      arrivals.clear();
    });
    sendData(res, 200, { done: true });
  });
  const release = () => pending.forEach((done) => done());
  /** Resolves once a /slow request is inside the handler: in flight. */
  const inHandler = () => (pending.size > 0 ? Promise.resolve() : new Promise<void>((r) => arrivals.add(r)));
  const server = await t.listen(0, '127.0.0.1');
  return { t, server, release, inHandler, port: (server.address() as AddressInfo).port };
}

describe('close()', () => {
  it('waits for an in-flight request to finish before resolving, and then refuses new connections', async () => {
    const { t, server, port, inHandler } = await startSlowApp(300);
    const inFlight = get(port, '/slow');
    await inHandler();
    const startedClose = Date.now();
    await t.close();
    const took = Date.now() - startedClose;
    // Long enough for the request to finish, well short of the 5 s force: the idle keep-alive socket was closed.
    expect(took).toBeGreaterThanOrEqual(200);
    expect(took).toBeLessThan(2000);
    await expect(inFlight).resolves.toMatchObject({ status: 200 });
    expect(server.listening).toBe(false);
    await expect(get(port, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('cuts connections after the shutdown timeout when a request hangs', async () => {
    const { t, port, release, inHandler } = await startSlowApp(5000, 150);
    const inFlight = get(port, '/slow').catch((e: Error) => e);
    await inHandler();
    const startedClose = Date.now();
    await t.close();
    release();
    expect(Date.now() - startedClose).toBeLessThan(1000);
    expect(await inFlight).toMatchObject({ message: expect.stringMatching(/socket hang up|ECONNRESET/) });
  });

  it('reports not ready while draining, and a second close() awaits the same drain', async () => {
    const { t, port, inHandler } = await startSlowApp(300);
    const inFlight = get(port, '/slow');
    await inHandler();
    const first = t.close();
    const second = t.close();
    expect(second).toBe(first);
    // The listening server no longer accepts; supertest serves the same app on its own ephemeral port.
    const ready = await request(t.app).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.data.status).toBe('stopping');
    expect(ready.headers.connection).toBe('close');
    await first;
    await expect(inFlight).resolves.toMatchObject({ status: 200 });
  });
});
