import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import request from 'supertest';
import { createLogger, currentContext, runWithContext } from '@sched/logger';
import { createHttpApp, onBehalfOf, requestContext, requireWorkspace, sendData, setRequestContext } from '../src';
import { captureLogger, flushLogs, testApp } from './test-app';

function buildApp() {
  const t = testApp({});
  t.route('GET', '/ctx', (req, res) => sendData(res, 200, { ...requestContext(req), logged_request_id: currentContext().request_id ?? null }));
  // A POST with a body: the context must survive the body parser's stream callbacks.
  t.route('POST', '/ctx', (req, res) => sendData(res, 200, { logged_request_id: currentContext().request_id ?? null }));
  t.route('GET', '/workspace', (req, res) => sendData(res, 200, { workspace: requireWorkspace(req) }));
  t.finalize();
  return t;
}

describe('request id', () => {
  const t = buildApp();

  it.each(['abc', 'req_Zx9-._:A', 'a'.repeat(128)])('keeps a well-formed caller X-Request-Id (%s) in header, meta and log context', async (id) => {
    const res = await request(t.app).get('/ctx').set('X-Request-Id', id);
    expect(res.headers['x-request-id']).toBe(id);
    expect(res.body.meta.request_id).toBe(id);
    expect(res.body.data.requestId).toBe(id);
    expect(res.body.data.logged_request_id).toBe(id);
  });

  it.each(['a'.repeat(129), 'has space', 'semi;colon', 'slash/id', 'é'])('replaces a malformed caller id (%s) with a fresh req_ id', async (id) => {
    const res = await request(t.app).get('/ctx').set('X-Request-Id', id);
    const made = res.headers['x-request-id'];
    expect(made).not.toBe(id);
    expect(made).toMatch(/^req_[A-Za-z0-9_-]{22,}$/);
    expect(res.body.meta.request_id).toBe(made);
  });

  it('makes a distinct id for every request without one, also on 404', async () => {
    const a = await request(t.app).get('/ctx');
    const b = await request(t.app).get('/nowhere');
    expect(a.headers['x-request-id']).toMatch(/^req_/);
    expect(b.status).toBe(404);
    expect(b.headers['x-request-id']).toMatch(/^req_/);
    expect(b.body.meta.request_id).toBe(b.headers['x-request-id']);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('keeps the request id in the async context when the body arrives after the headers', async () => {
    const own = buildApp();
    const server = await own.listen(0, '127.0.0.1');
    const port = (server.address() as AddressInfo).port;
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/ctx', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 7, 'x-request-id': 'req_late' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.flushHeaders();
      // The body is then read by later socket callbacks, not within the request's first tick.
      setTimeout(() => req.end('{"a":1}'), 50);
    });
    await own.close();
    expect(JSON.parse(body).data.logged_request_id).toBe('req_late');
  });

  it('keeps the request id in the async context after the JSON body was read', async () => {
    const res = await request(t.app).post('/ctx').set('X-Request-Id', 'req_body1').send({ a: 1 });
    expect(res.body.data.logged_request_id).toBe('req_body1');
  });

  it('logs one http line per request with method, route pattern, status and duration, never the Authorization header', async () => {
    await request(t.app).get('/ctx').set('X-Request-Id', 'req_log1').set('Authorization', 'Bearer sk_live_secretsecretsecret');
    await flushLogs();
    const lines = t.lines.filter((l) => l.request_id === 'req_log1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'http', method: 'GET', route: '/ctx', status: 200 });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    expect(JSON.stringify(lines[0])).not.toMatch(/sk_live|Bearer|authorization/i);
  });

  it('does not build the request line at all when the level is above http (the default, info)', async () => {
    const stream = new PassThrough();
    const written: string[] = [];
    stream.on('data', (c: Buffer) => written.push(c.toString()));
    const logger = createLogger({ service: 'test', stream, level: 'info' });
    const httpLog = jest.spyOn(logger, 'http');
    const app = createHttpApp({ service: 'test', logger });
    app.route('GET', '/ctx', (_req, res) => sendData(res, 200, {}));
    app.finalize();
    expect((await request(app.app).get('/ctx').set('X-Request-Id', 'req_quiet')).status).toBe(200);
    await flushLogs();
    expect(httpLog).not.toHaveBeenCalled();
    expect(written.join('')).not.toContain('req_quiet');
    // The metrics of the request are still recorded.
    const metrics = await request(app.app).get('/metrics');
    expect(metrics.text).toMatch(/http_requests_total\{[^}]*route="\/ctx"[^}]*\} 1/);
    // Raised to http at runtime, the line is written again.
    logger.level = 'http';
    await request(app.app).get('/ctx').set('X-Request-Id', 'req_loud');
    await flushLogs();
    expect(httpLog).toHaveBeenCalledTimes(1);
    expect(written.join('')).toContain('req_loud');
  });
});

describe('on whose behalf a handler calls other services (onBehalfOf)', () => {
  it('acts for the request being handled, after awaits and inside a nested log context, and for the service outside any request; log lines show none of it', async () => {
    const { logger, lines } = captureLogger();
    const t = createHttpApp({ service: 'test', logger });
    t.route('GET', '/who', async (req, res) => {
      setRequestContext(req, { workspaceId: 'wsp_1', apiKeyId: 'key_1', principal: 'api_key', scopes: ['slots:read'] });
      const first = onBehalfOf();
      await new Promise((r) => setTimeout(r, 5));
      await Promise.resolve();
      const later = onBehalfOf({ workspaceId: 'wsp_2' });
      const nested = await runWithContext({ event_id: 'evt_x' }, async () => {
        await new Promise((r) => setImmediate(r));
        return onBehalfOf();
      });
      logger.warn('inside', { n: 1 });
      sendData(res, 200, { first, later, nested });
    });
    t.finalize();
    const res = await request(t.app).get('/who').set('X-Request-Id', 'req_who1');
    const who = { principal: 'api_key', requestId: 'req_who1', workspaceId: 'wsp_1', apiKeyId: 'key_1', scopes: ['slots:read'] };
    expect(res.body.data).toEqual({ first: who, later: { ...who, workspaceId: 'wsp_2' }, nested: who });
    const outside = onBehalfOf({ workspaceId: 'wsp_3' });
    expect(outside).toMatchObject({ principal: 'service', workspaceId: 'wsp_3' });
    expect(outside.requestId).toMatch(/^req_/);
    await flushLogs();
    const line = lines.find((l) => l.message === 'inside');
    expect(line).toEqual({ level: 'warn', message: 'inside', n: 1, service: 'test', request_id: 'req_who1', workspace_id: 'wsp_1', timestamp: expect.any(String) });
  });
});

describe('context headers (no internal credential: the gateway, the public edge)', () => {
  const headers = { 'x-workspace-id': 'wsp_1', 'x-api-key-id': 'key_1', 'idempotency-key': 'idem-1' };

  it('ignores client-sent workspace and key headers and keeps the Idempotency-Key', async () => {
    const res = await request(buildApp().app).get('/ctx').set(headers);
    expect(res.body.data.workspaceId).toBeUndefined();
    expect(res.body.data.apiKeyId).toBeUndefined();
    expect(res.body.data.idempotencyKey).toBe('idem-1');
  });

  it('requireWorkspace answers 401 unauthenticated when nothing set a workspace, whatever the headers say', async () => {
    const res = await request(buildApp().app).get('/workspace').set(headers);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
  });
});
