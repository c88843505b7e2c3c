import net from 'node:net';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, startStubUpstream, type RunningGateway } from './support/gateway-harness';

/**
 * Hostile bodies and headers through the gateway (docs/security.md, "Hostile input"): the gateway
 * parses, re-serialises and forwards bodies; a body nested 10,000 deep used to overflow the stack in
 * that re-serialisation (500), on /v1 and on the booking page alike.
 */

let db: TestDatabase;
let stub: Awaited<ReturnType<typeof startStubUpstream>>;
let gw: RunningGateway;
let slug: string;
let apiKey: string;

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  stub = await startStubUpstream();
  gw = await startGateway(db, stub.url, {}, { stubbedUpstream: true });
  const ws = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Hostile Input Co' } });
  slug = ws.body.data.slug;
  const key = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws.body.data.id}/api-keys`, { token: ADMIN_TOKEN, json: { name: 'k', scopes: ['bookings:write'] } });
  apiKey = key.body.data.key;
});

afterAll(async () => {
  await gw.close();
  await stub.close();
  await db.drop();
});

const deep = (n: number) => `{"start_at":${'['.repeat(n)}${']'.repeat(n)}}`;

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': `k-${Math.random()}`, ...headers }, body });
  return { status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as any };
}

describe('through the gateway', () => {
  const routes = (): Array<{ name: string; path: string; headers: Record<string, string> }> => [
    { name: 'v1 (POST /v1/bookings)', path: '/v1/bookings', headers: { authorization: `Bearer ${apiKey}` } },
    { name: 'booking page (POST /book/api/public/…/bookings)', path: `/book/api/public/${slug}/intro/bookings`, headers: {} },
  ];

  it('a body nested 10,000 deep is 400 invalid_request (body/too_deep) and never forwarded', async () => {
    for (const route of routes()) {
      const before = stub.seen.length;
      const res = await post(route.path, deep(10_000), route.headers);
      expect({ route: route.name, status: res.status, body: res.body }).toEqual({
        route: route.name,
        status: 400,
        body: { error: { code: 'invalid_request', message: expect.any(String), details: [{ field: 'body', issue: 'too_deep' }] }, meta: { request_id: res.requestId } },
      });
      expect(stub.seen.length).toBe(before);
    }
  });

  it('a body that is not UTF-8 is 400 invalid_request (body/invalid_format) and never forwarded', async () => {
    const bytes = Buffer.concat([Buffer.from('{"guest":{"name":"Gin'), Buffer.from([0xe0, 0x80]), Buffer.from('a"}}')]);
    for (const route of routes()) {
      const before = stub.seen.length;
      const res = await post(route.path, bytes, route.headers);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'invalid_request', message: 'The request body is not valid UTF-8.', details: [{ field: 'body', issue: 'invalid_format' }] });
      expect(stub.seen.length).toBe(before);
    }
  });

  it('headers over the limit (20 KB) get 431 with the error envelope', async () => {
    const { port } = new URL(gw.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let text = '';
      socket.on('data', (c) => (text += c.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.end(`GET /v1/bookings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`);
    });
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    const requestId = /\r\nX-Request-Id: (req_[\w-]+)/.exec(head)?.[1];
    expect(JSON.parse(body)).toEqual({
      error: { code: 'invalid_request', message: 'The request headers are too large.', details: [{ field: 'headers', issue: 'too_long' }] },
      meta: { request_id: requestId },
    });
  });
});
