import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@sched/contracts';
import { claimsOf, createTestDatabase, type TestDatabase } from '@sched/testing';
import { startGateway, type RunningGateway } from './support/gateway-harness';

/** The gateway's public OAuth callback page, with calendar-sync's internal callback as a recording stub. */
let db: TestDatabase;
let gw: RunningGateway;
let calendarSync: { url: string; seen: Array<{ url: string; authorization?: string; body: any }>; close(): Promise<void> };
const HOST = newId('hst');

/** Answers as calendar-sync would, by the state it is given. */
async function startCalendarSyncStub(): Promise<typeof calendarSync> {
  const seen: Array<{ url: string; authorization?: string; body: any }> = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      seen.push({ url: req.url!, authorization: req.headers.authorization, body });
      res.setHeader('content-type', 'application/json');
      const fail = (status: number, code: string, message: string, details: unknown[] = []) => {
        res.statusCode = status;
        res.end(JSON.stringify({ error: { code, message, details }, meta: { request_id: 'req_x' } }));
      };
      if (body.error) return fail(422, 'invalid_reference', 'The calendar provider did not grant access (the host declined, or the provider refused).', [{ field: 'error', issue: 'access_denied' }]);
      if (body.state === 'gone-host') return fail(404, 'not_found', 'The resource was not found.');
      if (body.state === 'broken') return fail(500, 'internal_error', 'boom state=broken');
      if (body.state !== 'good-state') return fail(422, 'invalid_reference', 'This sign-in link is unknown, already used or expired; start connecting again.', [{ field: 'state', issue: 'unknown_or_used' }]);
      res.end(JSON.stringify({ data: { provider: 'google', host_id: HOST, host_name: 'Dana <script>alert(1)</script>', connection_id: newId('cal') }, meta: { request_id: 'req_x' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  calendarSync = await startCalendarSyncStub();
  // The booking page's limit is set far apart from the callback's, so the limit test shows which one applies.
  gw = await startGateway(db, 'http://127.0.0.1:1', {
    CALENDAR_SYNC_URL: calendarSync.url,
    OAUTH_CALLBACK_RATE_LIMIT: '10',
    OAUTH_CALLBACK_RATE_WINDOW_SECONDS: '3600',
    BOOKING_PAGE_RATE_LIMIT: '1000',
    LOG_LEVEL: 'debug',
  });
});

afterAll(async () => {
  await gw?.close();
  await calendarSync?.close();
  await db?.drop();
});

async function page(query: string): Promise<{ status: number; headers: Headers; html: string }> {
  const res = await fetch(`${gw.url}/oauth/callback${query}`);
  return { status: res.status, headers: res.headers, html: await res.text() };
}

describe('GET /oauth/callback', () => {
  it('hands state and code to calendar-sync as the gateway and answers a small escaped "connected" page, not cached, no referrer', async () => {
    const code = '4/0A-code-that-must-not-leak';
    const res = await page(`?state=good-state&code=${encodeURIComponent(code)}&scope=x`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.html).toContain('Calendar connected');
    expect(res.html).toContain('Google Calendar is now connected for Dana &lt;script&gt;alert(1)&lt;/script&gt;.');
    expect(res.html).not.toContain('<script>');
    expect(res.html).not.toContain(code);
    const seen = calendarSync.seen.at(-1)!;
    expect(seen.url).toBe('/internal/v1/oauth/callback');
    expect(seen.body).toEqual({ state: 'good-state', code });
    expect((await claimsOf(seen.authorization, 'calendar-sync')).caller).toBe('gateway');
    // Neither the code nor the state in the gateway's logs (the request line has the route only).
    const logs = gw.logs.join('\n');
    expect(logs).toContain('/oauth/callback');
    expect(logs).not.toContain(code);
    expect(logs).not.toContain('good-state');
  });

  it('a refusal at the provider (?error=access_denied) is passed on and the page says not connected, and why', async () => {
    const res = await page('?error=access_denied&state=some-state');
    expect(res.status).toBe(422);
    expect(res.html).toContain('Calendar not connected');
    expect(res.html).toContain('did not grant access');
    expect(calendarSync.seen.at(-1)!.body).toEqual({ state: 'some-state', error: 'access_denied' });
  });

  it('an unknown, used or expired state: not connected, start again', async () => {
    const res = await page('?state=used-state&code=c');
    expect(res.status).toBe(422);
    expect(res.html).toContain('already used or expired');
  });

  it('a host gone meanwhile is 404; a failure inside calendar-sync is a generic 502 page that repeats nothing of its answer', async () => {
    expect((await page('?state=gone-host&code=c')).status).toBe(404);
    const res = await page('?state=broken&code=c');
    expect(res.status).toBe(502);
    expect(res.html).toContain('could not finish connecting');
    expect(res.html).not.toContain('boom');
  });

  it('a link without state, or without code and error, or with an oversized value, is 400 without asking calendar-sync', async () => {
    const before = calendarSync.seen.length;
    for (const q of ['', '?code=c', '?state=s', `?state=${'s'.repeat(600)}&code=c`, '?state=a&state=b&code=c']) {
      const res = await page(q);
      expect(res.status).toBe(400);
      expect(res.html).toContain('incomplete or malformed');
    }
    expect(calendarSync.seen.length).toBe(before);
  });

  it('is limited per client address by OAUTH_CALLBACK_RATE_LIMIT, not the booking page\'s limit (429 page with Retry-After)', async () => {
    let limited: Awaited<ReturnType<typeof page>> | undefined;
    for (let i = 0; i < 12 && !limited; i++) {
      const res = await page('?state=x&code=c');
      if (res.status === 429) limited = res;
    }
    expect(limited).toBeDefined();
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
    // Within the hour window the callback was given (the booking page's is 60 s).
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(limited!.html).toContain('Too many attempts');
    // Counted apart: the callbacks used up their own budget, not the booking page's.
    const counters = await db.adminPool.query(`SELECT key_id FROM gateway.rate_limit_counters`);
    const keys: string[] = counters.rows.map((r) => r.key_id);
    expect(keys.some((k) => k.startsWith('oauth:ip:'))).toBe(true);
    expect(keys.filter((k) => k.startsWith('ip:'))).toEqual([]);
  });
});

describe('GET /oauth/callback with calendar-sync down', () => {
  let down: RunningGateway;
  beforeAll(async () => {
    down = await startGateway(db, 'http://127.0.0.1:1', { CALENDAR_SYNC_URL: 'http://127.0.0.1:1', OAUTH_CALLBACK_RATE_LIMIT: '1000' });
  });
  afterAll(async () => {
    await down?.close();
  });

  it('answers a 502 page', async () => {
    const res = await fetch(`${down.url}/oauth/callback?state=s&code=c`);
    expect(res.status).toBe(502);
    expect(await res.text()).toContain('could not be reached');
  });
});
