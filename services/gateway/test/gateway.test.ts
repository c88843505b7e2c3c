import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, settle, waitFor, type TestDatabase, claimsOf } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, startStubUpstream, type RunningGateway } from './support/gateway-harness';

const ALL = ['event_types:read', 'slots:read', 'bookings:read', 'bookings:write', 'booking_invitations:read', 'booking_invitations:write'];

let db: TestDatabase;
let stub: Awaited<ReturnType<typeof startStubUpstream>>;
let gw: RunningGateway;
let replica: RunningGateway;

async function workspace(name = 'Acme'): Promise<string> {
  const res = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function apiKey(ws: string, body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, { token: ADMIN_TOKEN, json: { name: 'k', scopes: ALL, ...body } });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, key: res.body.data.key };
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  stub = await startStubUpstream();
  gw = await startGateway(db, stub.url, {}, { stubbedUpstream: true });
  replica = await startGateway(db, stub.url, {}, { stubbedUpstream: true });
});

afterAll(async () => {
  await gw.close();
  await replica.close();
  await stub.close();
  await db.drop();
});

describe('authentication on /v1', () => {
  it('answers 401 with WWW-Authenticate: Bearer and the error envelope when no key is sent', async () => {
    const res = await call(gw.url, 'GET', '/v1/bookings');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body).toEqual({
      error: { code: 'unauthenticated', message: expect.any(String), details: [] },
      meta: { request_id: res.headers.get('x-request-id') },
    });
  });

  it('answers 401 for a malformed key, an unknown key, and before deciding 404 on an unknown path', async () => {
    for (const token of ['nope', 'sk_live_short', `sk_live_${'a'.repeat(32)}`]) {
      expect((await call(gw.url, 'GET', '/v1/bookings', { token })).status).toBe(401);
    }
    expect((await call(gw.url, 'GET', '/v1/no-such-thing')).status).toBe(401);
  });

  it('stores keys only as their SHA-256 hash and shows the key once', async () => {
    const ws = await workspace();
    const { id, key } = await apiKey(ws);
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    const rows = await db.adminPool.query('SELECT * FROM gateway.api_keys WHERE id = $1', [id]);
    expect(JSON.stringify(rows.rows)).not.toContain(key.slice(8));
    expect(rows.rows[0].key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    const list = await call(gw.url, 'GET', `/admin/v1/workspaces/${ws}/api-keys`, { token: ADMIN_TOKEN });
    expect(JSON.stringify(list.body)).not.toContain(key.slice(8));
    expect(list.body.data[0]).toMatchObject({ id, key_hint: key.slice(0, 12) + '…', revoked_at: null });
  });

  it('gives test workspaces sk_test_ keys', async () => {
    const res = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Sandbox', mode: 'test' } });
    expect((await apiKey(res.body.data.id)).key).toMatch(/^sk_test_/);
  });

  it('stops accepting a revoked key within 5 s on every replica', async () => {
    const ws = await workspace();
    const { id, key } = await apiKey(ws);
    // Warm both replicas' caches so the revocation has to outlive a cached entry.
    expect((await call(gw.url, 'GET', '/v1/bookings', { token: key })).status).toBe(200);
    expect((await call(replica.url, 'GET', '/v1/bookings', { token: key })).status).toBe(200);
    const revoked = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys/${id}/revoke`, { token: ADMIN_TOKEN });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revoked_at).toEqual(expect.any(String));
    expect(revoked.body.data).not.toHaveProperty('key');
    const started = Date.now();
    await waitFor(async () => (await call(gw.url, 'GET', '/v1/bookings', { token: key })).status === 401, { timeoutMs: 6000, intervalMs: 100 });
    await waitFor(async () => (await call(replica.url, 'GET', '/v1/bookings', { token: key })).status === 401, { timeoutMs: 6000, intervalMs: 100 });
    expect(Date.now() - started).toBeLessThanOrEqual(5500);
  }, 15000);

  it('refuses a key once its expiry has passed', async () => {
    const ws = await workspace();
    const expiresAt = Date.now() + 1500;
    const { key } = await apiKey(ws, { expires_at: new Date(expiresAt).toISOString() });
    expect((await call(gw.url, 'GET', '/v1/bookings', { token: key })).status).toBe(200);
    await settle(expiresAt - Date.now() + 50, 'the expiry is wall-clock time, and the gateway takes no clock to move');
    expect((await call(gw.url, 'GET', '/v1/bookings', { token: key })).status).toBe(401);
  });

  it('refuses to create a key that has already expired', async () => {
    const ws = await workspace();
    const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, {
      token: ADMIN_TOKEN,
      json: { name: 'k', scopes: ALL, expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'expires_at', issue: 'out_of_range' }]);
  });
});

describe('scopes and the order of checks (decisions.md §2, §3)', () => {
  let key: string;
  beforeAll(async () => {
    key = (await apiKey(await workspace(), { scopes: ['bookings:read'] })).key;
  });

  it('answers 403 naming the scope a key lacks', async () => {
    const res = await call(gw.url, 'POST', '/v1/bookings', { token: key, json: {} });
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({ code: 'insufficient_scope', message: expect.any(String), details: [{ field: 'scope', issue: 'bookings:write' }] });
  });

  it('answers 404 for an unknown path and 405 with Allow for a known path, before the scope check', async () => {
    const missing = await call(gw.url, 'GET', '/v1/bookingz', { token: key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const wrong = await call(gw.url, 'DELETE', '/v1/event-types', { token: key });
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.code).toBe('method_not_allowed');
    expect(wrong.headers.get('allow')).toContain('GET');
  });

  it('checks the scope before the body: 403 even for a body that is too large or not JSON', async () => {
    expect((await call(gw.url, 'POST', '/v1/bookings', { token: key, body: 'x'.repeat(70000), headers: { 'content-type': 'text/plain' } })).status).toBe(403);
  });
});

describe('the error envelope for bad bodies', () => {
  let key: string;
  beforeAll(async () => {
    key = (await apiKey(await workspace())).key;
  });

  it('413 payload_too_large for a body over 64 KiB', async () => {
    const res = await call(gw.url, 'POST', '/v1/bookings', { token: key, body: JSON.stringify({ pad: 'x'.repeat(65 * 1024) }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('415 unsupported_media_type for a body that is not JSON', async () => {
    const res = await call(gw.url, 'POST', '/v1/bookings', { token: key, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  it('400 invalid_request for malformed JSON and for a rule broken, naming the field', async () => {
    const bad = await call(gw.url, 'POST', '/v1/bookings', { token: key, body: '{"a":', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    const unknown = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'x', colour: 'red' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([{ field: 'colour', issue: 'unknown_field' }]);
    const long = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'x'.repeat(121) } });
    expect(long.body.error.details).toEqual([{ field: 'name', issue: 'too_long' }]);
  });

  it('404 not_found for an unknown workspace, with a message that does not echo the id', async () => {
    const res = await call(gw.url, 'GET', '/admin/v1/workspaces/wsp_doesnotexist', { token: ADMIN_TOKEN });
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body.error)).not.toContain('wsp_doesnotexist');
  });
});

describe('the admin API', () => {
  it('requires the admin token, before routing', async () => {
    expect((await call(gw.url, 'POST', '/admin/v1/workspaces', { json: { name: 'x' } })).status).toBe(401);
    expect((await call(gw.url, 'POST', '/admin/v1/workspaces', { token: 'wrong', json: { name: 'x' } })).status).toBe(401);
    expect((await call(gw.url, 'GET', '/admin/v1/nothing-here')).status).toBe(401);
    expect((await call(gw.url, 'GET', '/admin/v1/nothing-here', { token: ADMIN_TOKEN })).status).toBe(404);
  });

  it('forwards a workspace admin path to its owner only when the workspace exists', async () => {
    expect((await call(gw.url, 'GET', '/admin/v1/workspaces/wsp_nope/hosts', { token: ADMIN_TOKEN })).status).toBe(404);
    const ws = await workspace();
    const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/hosts`, { token: ADMIN_TOKEN, json: { name: 'Ada' } });
    expect(res.status).toBe(201);
    const seen = stub.seen.at(-1)!;
    expect(seen.url).toBe(`/admin/v1/workspaces/${ws}/hosts`);
    // The operator, in the path's workspace, vouched for by the gateway's credential for availability.
    expect(await claimsOf(seen.headers.authorization, 'availability')).toMatchObject({ caller: 'gateway', principal: 'admin', workspaceId: ws });
    expect(JSON.parse(seen.body)).toEqual({ name: 'Ada' });
  });
});

describe('routing to services', () => {
  let ws: string;
  let key: { id: string; key: string };
  beforeAll(async () => {
    ws = await workspace();
    key = await apiKey(ws);
  });

  it('forwards workspace id, key id, request id, Idempotency-Key, query and body; the caller cannot choose the workspace', async () => {
    const res = await call(gw.url, 'POST', '/v1/bookings?x=1', {
      token: key.key,
      json: { event_type_id: 'evt_1' },
      headers: { 'idempotency-key': 'idem-123', 'x-request-id': 'trace.abc-1', 'x-workspace-id': 'wsp_someone_else', 'x-api-key-id': 'key_forged' },
    });
    expect(res.status).toBe(201);
    // The answer's body and type as the service sent them (express adds the charset, as it always did).
    expect(res.body).toEqual({ data: { upstream: 'stub', path: '/v1/bookings?x=1' }, meta: { request_id: 'trace.abc-1' } });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    expect(res.headers.get('x-internal-secret-header')).toBeNull();
    expect(res.headers.get('x-request-id')).toBe('trace.abc-1');
    const seen = stub.seen.at(-1)!;
    expect(seen.url).toBe('/v1/bookings?x=1');
    expect(seen.headers).toMatchObject({ 'x-request-id': 'trace.abc-1', 'idempotency-key': 'idem-123' });
    // Who the request acts for travels only in the credential; the client's context headers are not passed on.
    expect(await claimsOf(seen.headers.authorization, 'booking')).toEqual({
      caller: 'gateway',
      principal: 'api_key',
      workspaceId: ws,
      apiKeyId: key.id,
      scopes: expect.arrayContaining(['bookings:write']),
      invitationId: undefined,
      requestId: 'trace.abc-1',
    });
    expect(seen.headers['x-workspace-id']).toBeUndefined();
    expect(seen.headers['x-api-key-id']).toBeUndefined();
    expect(JSON.parse(seen.body)).toEqual({ event_type_id: 'evt_1' });
  });

  it('passes a GET body on (GET /v1/event-types reads cursor and limit from it)', async () => {
    // fetch() refuses a GET body, so this one goes through node:http as a server-side client might send it.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${gw.url}/v1/event-types`, {
        method: 'GET',
        // Node's client sends a GET body unframed unless told its length.
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'content-length': '11' },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ limit: 5 }));
    });
    expect(status).toBe(200);
    expect(JSON.parse(stub.seen.at(-1)!.body)).toEqual({ limit: 5 });
  });

  it('answers 502 upstream_unavailable when the owning service is down', async () => {
    const res = await call(gw.url, 'POST', `/admin/v1/workspaces/${ws}/bookings/bkg_1/calendar-resync`, { token: ADMIN_TOKEN });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_unavailable');
  });

  it('answers 504 upstream_unavailable when the service does not answer in time', async () => {
    const res = await call(gw.url, 'GET', '/v1/bookings/bkg_slow', { token: key.key });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('upstream_unavailable');
  });

  it('does not retry a timed-out forward: a GET reaches a silent service once, then 504 (v1 and booking page)', async () => {
    // A service that takes every request and never answers. Counting what it received is the check:
    // a retry would have reached it before the gateway gave up, so the count is final at the 504.
    const received: string[] = [];
    const silent = http.createServer((req) => void received.push(req.url!));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const hung = await startGateway(db, silentUrl, {}, { stubbedUpstream: true });
    try {
      const res = await call(hung.url, 'GET', '/v1/bookings/bkg_never', { token: key.key });
      expect(res.status).toBe(504);
      expect(res.body.error.code).toBe('upstream_unavailable');
      expect(received.filter((u) => u === '/v1/bookings/bkg_never')).toHaveLength(1);
      const page = await call(hung.url, 'GET', '/book/api/invitation', { headers: { 'x-invitation-credential': 'c'.repeat(43) } });
      expect(page.status).toBe(504);
      expect(page.body.error.code).toBe('upstream_unavailable');
      expect(received.filter((u) => u === '/internal/v1/page/invitation')).toHaveLength(1);
    } finally {
      await hung.close();
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('rate limiting (decisions.md §12)', () => {
  it('counts a key across replicas and answers 429 with Retry-After and RateLimit headers once over', async () => {
    const ws = await workspace();
    const { key } = await apiKey(ws, { rate_limit: { limit: 4, window_seconds: 60 } });
    const statuses: number[] = [];
    for (const base of [gw.url, replica.url, gw.url, replica.url]) statuses.push((await call(base, 'GET', '/v1/bookings', { token: key })).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const over = await call(replica.url, 'GET', '/v1/bookings', { token: key });
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('rate_limited');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('ratelimit-limit')).toBe('4');
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(over.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
  });

  it('stays exact for concurrent requests of one key on two replicas (batched upserts): exactly the limit passes', async () => {
    const ws = await workspace();
    const { id, key } = await apiKey(ws, { rate_limit: { limit: 10, window_seconds: 60 } });
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => call(i % 2 ? replica.url : gw.url, 'GET', '/v1/bookings', { token: key })));
    const allowed = answers.filter((a) => a.status === 200);
    expect(allowed).toHaveLength(10);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(14);
    // Each allowed request saw its own position in the window: remaining 9, 8, …, 0 once each.
    expect(allowed.map((a) => Number(a.headers.get('ratelimit-remaining'))).sort((x, y) => y - x)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const rows = await db.adminPool.query('SELECT sum(count)::int AS total FROM gateway.rate_limit_counters WHERE key_id = $1', [id]);
    expect(rows.rows[0].total).toBe(24);
  });

  it('sends the RateLimit headers on every /v1 answer, using the default policy', async () => {
    const { key } = await apiKey(await workspace());
    const res = await call(gw.url, 'GET', '/v1/bookings', { token: key });
    expect(res.headers.get('ratelimit-limit')).toBe('100');
    expect(res.headers.get('ratelimit-remaining')).toBe('99');
  });
});

describe('logs', () => {
  it('never contain an API key or the admin token', async () => {
    const { key } = await apiKey(await workspace());
    await call(gw.url, 'GET', '/v1/bookings', { token: key });
    await call(gw.url, 'GET', '/v1/nope', { token: key });
    const all = gw.logs.join('');
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(key.slice(8));
    expect(all).not.toContain(ADMIN_TOKEN);
  });
});

describe('workspace slugs (booking page URLs)', () => {
  it('are made from the name when not given, unique, and a taken slug is refused naming the field', async () => {
    const a = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Café Zürich GmbH' } });
    expect(a.body.data.slug).toMatch(/^cafe-zurich-gmbh(-[a-z0-9x]+)?$/);
    const b = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Café Zürich GmbH' } });
    expect(b.status).toBe(201);
    expect(b.body.data.slug).not.toBe(a.body.data.slug);
    const taken = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'X', slug: a.body.data.slug } });
    expect(taken.status).toBe(400);
    expect(taken.body.error.details).toEqual([{ field: 'slug', issue: 'taken' }]);
    for (const slug of ['i', 'api', 'assets']) {
      const reserved = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'X', slug } });
      expect(reserved.body.error.details).toEqual([{ field: 'slug', issue: 'reserved' }]);
    }
    const api = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'API' } });
    expect(api.body.data.slug).toMatch(/^api-[a-z0-9x]+$/);
    const bad = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'X', slug: 'Not A Slug' } });
    expect(bad.body.error.details).toEqual([{ field: 'slug', issue: 'invalid_format' }]);
  });
});

describe('the machine-readable contract', () => {
  it('is served at GET /v1/openapi.json without a key: OpenAPI 3.1, version 1.0.0, every v1 path', async () => {
    const res = await call(gw.url, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    expect(res.body.info.version).toBe('1.0.0');
    for (const p of ['/v1/bookings', '/v1/bookings/{booking}/reschedule', '/v1/event-types/{eventType}/slots', '/v1/booking-invitations/{bookingInvitation}/reissue']) {
      expect(Object.keys(res.body.paths)).toContain(p);
    }
  });
});
