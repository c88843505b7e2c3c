import http from 'node:http';
import { internalAuthorization } from '@sched/testing';
import { createBody, startBookingHarness, type BookingHarness } from './support/booking-harness';

/**
 * The two creates (POST /v1/bookings and the booking page's internal create) are answered on booking's fast
 * path (libs/http fast-path.ts; docs/booking.md, "Fast path"), before express; any other spelling of the path
 * goes to express, whose route runs the same steps. Both must answer alike: status, header lines and bytes.
 */
let h: BookingHarness;
beforeAll(async () => {
  h = await startBookingHarness();
});
afterAll(async () => {
  await h.close();
});

const fastPathTotal = async () => (await h.service.http.registry.getSingleMetric('http_fast_path_requests_total')!.get()).values[0]?.value ?? 0;

interface RawAnswer {
  status: number;
  /** Header lines as sent, in order, without Date (the clock's second). */
  headers: string[];
  body: string;
}

/** One request on its own connection, answered as sent (raw header lines). */
function send(path: string, body: string, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(h.bookingUrl);
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'POST', agent: false, headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== 'date') lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve({ status: res.statusCode!, headers: lines, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The gateway's credential for the main workspace's key, with a fixed request id (so two answers can be equal byte for byte). */
const credential = (requestId: string) =>
  internalAuthorization('booking', { principal: 'api_key', workspaceId: h.main.workspaceId, apiKeyId: h.main.keyId, scopes: ['bookings:read', 'bookings:write'], requestId });

let n = 0;
/** The same request to the fast path (`/v1/bookings`) and to express (`/v1/bookings/`, the router's trailing-slash spelling), counted. */
async function both(body: string, headers: (requestId: string) => Promise<Record<string, string>>): Promise<{ fast: RawAnswer; express: RawAnswer }> {
  n += 1;
  const requestId = `req_fastpath${String(n).padStart(4, '0')}`;
  const before = await fastPathTotal();
  const fast = await send('/v1/bookings', body, await headers(requestId));
  expect(await fastPathTotal()).toBe(before + 1);
  const express = await send('/v1/bookings/', body, await headers(requestId));
  expect(await fastPathTotal()).toBe(before + 1);
  return { fast, express };
}

const json = (extra: Record<string, string> = {}) => async (requestId: string) => ({ 'content-type': 'application/json', ...(await credential(requestId)), ...extra });

it('answers the v1 create through the gateway and the internal create on the fast path; other spellings go to express', async () => {
  const before = await fastPathTotal();
  expect((await h.api('POST', '/v1/bookings', { json: createBody() })).status).toBe(201);
  expect(await fastPathTotal()).toBe(before + 1);
  const path = `/internal/v1/workspaces/${h.main.workspaceId}/bookings`;
  const page = await internalAuthorization('booking', { principal: 'booking_page', workspaceId: h.main.workspaceId }, { caller: 'invitation' });
  const internal = await send(path, JSON.stringify({ ...createBody(), source: 'booking_page' }), { 'content-type': 'application/json', ...page });
  expect(internal.status).toBe(201);
  expect(await fastPathTotal()).toBe(before + 2);
  const routed = await send(`${path}/`, JSON.stringify({ ...createBody(), source: 'booking_page' }), { 'content-type': 'application/json', ...page });
  expect(routed.status).toBe(201);
  expect(await fastPathTotal()).toBe(before + 2);
});

it('answers a create alike on both paths: the 201 (its header lines), and replays of one key, byte for byte', async () => {
  // Two Bookings (other slots; ids and times differ): the same header lines but for the request id and length.
  const created = [await send('/v1/bookings', JSON.stringify(createBody()), await json()('req_fastpathone')), await send('/v1/bookings/', JSON.stringify(createBody()), await json()('req_fastpathtwo'))];
  expect(created.map((a) => a.status)).toEqual([201, 201]);
  const names = (a: RawAnswer) => a.headers.map((l) => (/^(Content-Length|X-Request-Id):/.test(l) ? l.split(':')[0] : l));
  expect(names(created[0]!)).toEqual(names(created[1]!));

  // The key's scope and fingerprint are the same on both: the express spelling replays the fast path's create.
  const body = JSON.stringify(createBody());
  const first = await send('/v1/bookings', body, await json({ 'idempotency-key': 'fast-path-replay' })('req_fastpathfirst'));
  expect(first.status).toBe(201);
  const replays = await both(body, json({ 'idempotency-key': 'fast-path-replay' }));
  expect(replays.fast.status).toBe(201);
  expect(replays.fast.headers).toContain('Idempotent-Replayed: true');
  expect(replays.fast).toEqual(replays.express);
  expect(JSON.parse(replays.fast.body).data).toEqual(JSON.parse(first.body).data);

  // Another body under the key: 422 on both.
  const reused = await both(JSON.stringify(createBody()), json({ 'idempotency-key': 'fast-path-replay' }));
  expect(reused.fast.status).toBe(422);
  expect(reused.fast).toEqual(reused.express);
});

it.each([
  ['a body the contract refuses', JSON.stringify({ ...createBody(), guest: undefined, extra: 1 }), json(), 400],
  ['malformed JSON', '{"event_type_id":', json(), 400],
  ['a NUL in the body', JSON.stringify(createBody({ metadata: { note: 'a\u0000b' } })), json(), 400],
  ['a malformed Idempotency-Key', JSON.stringify(createBody()), json({ 'idempotency-key': '' }), 400],
  ['no credential', JSON.stringify(createBody()), async (requestId: string) => ({ 'content-type': 'application/json', 'x-request-id': requestId }), 401],
  ['a key without bookings:write', JSON.stringify(createBody()), async (requestId: string) => ({
    'content-type': 'application/json',
    ...(await internalAuthorization('booking', { principal: 'api_key', workspaceId: h.main.workspaceId, apiKeyId: h.main.keyId, scopes: ['bookings:read'], requestId })),
  }), 403],
  ['another media type', JSON.stringify(createBody()), json({ 'content-type': 'text/plain' }), 415],
])('answers %s alike on both paths', async (_name, body, headers, status) => {
  const { fast, express } = await both(body, headers);
  expect(fast.status).toBe(status);
  expect(fast).toEqual(express);
});
