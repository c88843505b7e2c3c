import request from 'supertest';
import { z } from 'zod';
import { DomainError } from '@sched/contracts';
import { parseBody, parseQuery, sendData } from '../src';
import { flushLogs, testApp } from './test-app';

const bookingBody = z.strictObject({
  start_at: z.iso.datetime(),
  guest: z.strictObject({ name: z.string().min(1).max(100), email: z.email().max(254) }),
  seats: z.number().int().min(1).max(10).optional(),
  kind: z.enum(['video', 'phone']).optional(),
  note: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === 'forbidden') ctx.addIssue({ code: 'custom', message: 'no', params: { issue: 'not_allowed_here' } });
    }),
});

function buildApp() {
  const t = testApp();
  t.route('POST', '/v1/bookings', (req, res) => sendData(res, 201, { received: parseBody(bookingBody, req) }));
  t.route('GET', '/v1/bookings/:booking', (req, res) => sendData(res, 200, { id: req.params.booking }));
  t.route('DELETE', '/v1/bookings/:booking', (_req, res) => sendData(res, 200, {}));
  t.route('POST', '/v1/echo', (req, res) => sendData(res, 200, { body: req.body ?? null }));
  t.route('GET', '/v1/list', (req, res) => sendData(res, 200, parseQuery(z.strictObject({ limit: z.coerce.number().int().max(100).optional() }), req)));
  t.route('GET', '/v1/boom', () => {
    throw new Error('connect ECONNREFUSED db.internal:5432 select * from bookings');
  });
  t.route('GET', '/v1/async-boom', async () => {
    await Promise.resolve();
    throw new Error('async failure at db.internal');
  });
  t.route('GET', '/v1/unauth', () => {
    throw new DomainError('unauthenticated');
  });
  t.route('GET', '/v1/busy', () => {
    throw new DomainError('idempotency_request_in_progress', { retryAfterSeconds: 1 });
  });
  t.route('GET', '/v1/slow-upstream', () => {
    throw new DomainError('upstream_unavailable', { status: 504 });
  });
  t.finalize();
  return t;
}

const validBooking = { start_at: '2026-11-22T09:30:00.000Z', guest: { name: 'Ada', email: 'ada@example.com' } };

function expectErrorEnvelope(body: unknown, code: string) {
  expect(body).toEqual({
    error: { code, message: expect.any(String), details: expect.any(Array) },
    meta: { request_id: expect.stringMatching(/^req_/) },
  });
}

describe('error envelope and status mapping', () => {
  const t = buildApp();

  it('accepts a valid JSON body and answers with the data envelope', async () => {
    const res = await request(t.app).post('/v1/bookings').send(validBooking);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: { received: validBooking }, meta: { request_id: res.headers['x-request-id'] } });
  });

  it('answers malformed JSON with 400 invalid_request and no parser internals', async () => {
    const res = await request(t.app).post('/v1/bookings').set('Content-Type', 'application/json').send('{"start_at": ');
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, 'invalid_request');
    expect(JSON.stringify(res.body)).not.toMatch(/Unexpected|position|SyntaxError/);
  });

  it('maps zod issues to dotted fields and the issue words of decisions §2', async () => {
    const res = await request(t.app)
      .post('/v1/bookings')
      .send({ start_at: '2026-11-22T09:30:00+02:00', guest: { email: 'not-an-email', nickname: 'x' }, seats: 11, kind: 'fax', extra: 1, other: 2, note: 'forbidden' });
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, 'invalid_request');
    const details = (res.body as { error: { details: unknown[] } }).error.details;
    expect(details).toEqual(
      expect.arrayContaining([
        { field: 'start_at', issue: 'invalid_format' },
        { field: 'guest.name', issue: 'required' },
        { field: 'guest.email', issue: 'invalid_format' },
        { field: 'guest.nickname', issue: 'unknown_field' },
        { field: 'seats', issue: 'out_of_range' },
        { field: 'kind', issue: 'invalid_value' },
        { field: 'extra', issue: 'unknown_field' },
        { field: 'other', issue: 'unknown_field' },
        { field: 'note', issue: 'not_allowed_here' },
      ]),
    );
    expect(details).toHaveLength(9);
  });

  it('reports too_long and too_short for strings', async () => {
    const res = await request(t.app)
      .post('/v1/bookings')
      .send({ ...validBooking, guest: { name: 'x'.repeat(101), email: 'ada@example.com' } });
    expect(res.body.error.details).toEqual([{ field: 'guest.name', issue: 'too_long' }]);
    const short = await request(t.app)
      .post('/v1/bookings')
      .send({ ...validBooking, guest: { name: '', email: 'ada@example.com' } });
    expect(short.body.error.details).toEqual([{ field: 'guest.name', issue: 'too_short' }]);
  });

  it('names the whole body as required when a required body is missing', async () => {
    const res = await request(t.app).post('/v1/bookings');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'body', issue: 'required' }]);
  });

  it('leaves req.body undefined when no body is sent, and accepts +json media types', async () => {
    const none = await request(t.app).post('/v1/echo');
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual({ body: null });
    const vendor = await request(t.app).post('/v1/echo').set('Content-Type', 'application/merge-patch+json; charset=utf-8').send('{"a":1}');
    expect(vendor.body.data).toEqual({ body: { a: 1 } });
  });

  it('answers an unknown path with 404 not_found', async () => {
    const res = await request(t.app).get('/v1/nothing-here');
    expect(res.status).toBe(404);
    expectErrorEnvelope(res.body, 'not_found');
  });

  it('answers an undecodable path parameter with 400, not 500', async () => {
    const res = await request(t.app).get('/v1/bookings/%E0%A4%A');
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, 'invalid_request');
  });

  it('answers a known path with an unregistered method with 405 and Allow listing its methods', async () => {
    const res = await request(t.app).put('/v1/bookings/bkg_123');
    expect(res.status).toBe(405);
    expectErrorEnvelope(res.body, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD, DELETE');
    const built = await request(t.app).post('/healthz');
    expect(built.status).toBe(405);
    expect(built.headers.allow).toBe('GET, HEAD');
  });

  it('checks 404/405 before 413/415 (decisions §2 order)', async () => {
    const res = await request(t.app).put('/v1/bookings/bkg_1').set('Content-Type', 'text/plain').send('x'.repeat(70 * 1024));
    expect(res.status).toBe(405);
    const unknown = await request(t.app).post('/v1/unknown').set('Content-Type', 'text/plain').send('hello');
    expect(unknown.status).toBe(404);
  });

  it('answers a JSON body of 64 KiB + 1 byte with 413 and accepts exactly 64 KiB', async () => {
    const pad = (total: number) => `{"p":"${'x'.repeat(total - 8)}"}`;
    expect(Buffer.byteLength(pad(64 * 1024))).toBe(64 * 1024);
    const over = await request(t.app).post('/v1/echo').set('Content-Type', 'application/json').send(pad(64 * 1024 + 1));
    expect(over.status).toBe(413);
    expectErrorEnvelope(over.body, 'payload_too_large');
    const exact = await request(t.app).post('/v1/echo').set('Content-Type', 'application/json').send(pad(64 * 1024));
    expect(exact.status).toBe(200);
  });

  it('answers a text/plain body with 415 unsupported_media_type', async () => {
    const res = await request(t.app).post('/v1/echo').set('Content-Type', 'text/plain').send('{"a":1}');
    expect(res.status).toBe(415);
    expectErrorEnvelope(res.body, 'unsupported_media_type');
  });

  it('rejects a query parameter given twice', async () => {
    const res = await request(t.app).get('/v1/list?limit=1&limit=2');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'limit', issue: 'duplicate' }]);
    const unknown = await request(t.app).get('/v1/list?limit=5&sort=asc');
    expect(unknown.body.error.details).toEqual([{ field: 'sort', issue: 'unknown_field' }]);
    const ok = await request(t.app).get('/v1/list?limit=5');
    expect(ok.body.data).toEqual({ limit: 5 });
  });

  it.each(['/v1/boom', '/v1/async-boom'])('turns a thrown plain Error (%s) into 500 internal_error without internals', async (path) => {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(500);
    expectErrorEnvelope(res.body, 'internal_error');
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/stack|db\.internal|select|ECONNREFUSED|at .*\.ts/);
    await flushLogs();
    const logged = t.lines.find((l) => l.message === 'unhandled error' && l.route === path);
    expect(logged).toBeDefined();
    expect(JSON.stringify(logged)).toContain('stack');
  });

  it('adds WWW-Authenticate on 401, Retry-After when set, and honours a status override', async () => {
    const unauth = await request(t.app).get('/v1/unauth');
    expect(unauth.status).toBe(401);
    expect(unauth.headers['www-authenticate']).toBe('Bearer');
    const busy = await request(t.app).get('/v1/busy');
    expect(busy.status).toBe(409);
    expect(busy.headers['retry-after']).toBe('1');
    const slow = await request(t.app).get('/v1/slow-upstream');
    expect(slow.status).toBe(504);
    expectErrorEnvelope(slow.body, 'upstream_unavailable');
  });
});
