import { Script } from 'node:vm';
import { createTestDatabase, type TestDatabase } from '@sched/testing';
import { ADMIN_TOKEN, call, startGateway, startStubUpstream, type RunningGateway } from './support/gateway-harness';

/** The gateway's half of the hosted booking page, with the invitation service as a recording stub. */
let db: TestDatabase;
let stub: Awaited<ReturnType<typeof startStubUpstream>>;
let gw: RunningGateway;
let workspace: { id: string; slug: string };
const CREDENTIAL = 'Q2VydGFpbmx5LW5vdC1hLXJlYWwtY3JlZGVudGlhbDEy'.slice(0, 43);

beforeAll(async () => {
  db = await createTestDatabase({ services: ['gateway'] });
  stub = await startStubUpstream();
  gw = await startGateway(db, stub.url, { BOOKING_PAGE_RATE_LIMIT: '3', BOOKING_PAGE_RATE_WINDOW_SECONDS: '3600' });
  const res = await call(gw.url, 'POST', '/admin/v1/workspaces', { token: ADMIN_TOKEN, json: { name: 'Page Gateway Co' } });
  workspace = { id: res.body.data.id, slug: res.body.data.slug };
});

afterAll(async () => {
  await gw.close();
  await stub.close();
  await db.drop();
});

describe('booking page assets', () => {
  it('serves one HTML shell for invitation and public URLs, with a strict CSP, no-referrer and no-store', async () => {
    for (const path of [`/book/i/${CREDENTIAL}`, `/book/${workspace.slug}/intro`]) {
      const res = await fetch(`${gw.url}${path}`);
      const html = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(html).toContain('<script src="/book/assets/booking-page.js" defer></script>');
      expect(html).toContain('aria-live="polite"');
      expect(html).toMatch(/<label for="email">Email<\/label>/);
    }
  });

  it('serves the script and the styles with their types, and 404 for any other asset', async () => {
    const js = await fetch(`${gw.url}/book/assets/booking-page.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const script = await js.text();
    expect(script).toMatch(/["']X-Invitation-Credential["']/);
    // The browser module bundled into one classic script: no module syntax, no TypeScript left.
    expect(() => new Script(script)).not.toThrow();
    expect(script).not.toMatch(/^\s*(import|export)\b/m);
    const css = await fetch(`${gw.url}/book/assets/booking-page.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await call(gw.url, 'GET', '/book/assets/secrets.txt')).status).toBe(404);
    // Only the page's own files: not a name that every object has.
    expect((await call(gw.url, 'GET', '/book/assets/constructor')).status).toBe(404);
  });

  it('answers 404 for the public page of an unknown workspace without asking the invitation service', async () => {
    const before = stub.seen.length;
    expect((await call(gw.url, 'GET', '/book/no-such-workspace/intro')).status).toBe(404);
    expect((await call(gw.url, 'GET', '/book/api/public/no-such-workspace/intro')).body.error.code).toBe('not_found');
    expect(stub.seen.length).toBe(before);
  });
});

describe('booking page API forwarding', () => {
  it('forwards the credential in a header, never in a URL, and needs no API key', async () => {
    const res = await call(gw.url, 'GET', '/book/api/invitation/slots?from=2030-01-01&to=2030-01-02&timezone=UTC', { headers: { 'x-invitation-credential': CREDENTIAL } });
    expect(res.status).toBe(200);
    const seen = stub.seen.at(-1)!;
    expect(seen.url).toBe('/internal/v1/page/invitation/slots?from=2030-01-01&to=2030-01-02&timezone=UTC');
    expect(seen.headers['x-invitation-credential']).toBe(CREDENTIAL);
    expect(seen.headers['x-workspace-id']).toBeUndefined();
  });

  it('resolves the workspace slug of a public page to its id in the forwarded path', async () => {
    await call(gw.url, 'GET', `/book/api/public/${workspace.slug}/intro`);
    expect(stub.seen.at(-1)!.url).toBe(`/internal/v1/workspaces/${workspace.id}/page/event-types/intro`);
  });

  it('limits page booking POSTs per client IP on the shared counters: 429 with Retry-After past the limit', async () => {
    const post = () => call(gw.url, 'POST', `/book/api/public/${workspace.slug}/intro/bookings`, { json: { start_at: '2030-01-01T09:00:00Z' } });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await post());
    expect(answers.slice(0, 3).map((a) => a.status)).toEqual([201, 201, 201]);
    expect(answers[2]!.headers.get('ratelimit-remaining')).toBe('0');
    expect(answers[3]!.status).toBe(429);
    expect(answers[3]!.body.error.code).toBe('rate_limited');
    expect(Number(answers[3]!.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same counter serves invitation bookings from this address; reads are not limited.
    expect((await call(gw.url, 'POST', '/book/api/invitation/bookings', { json: {} })).status).toBe(429);
    expect((await call(gw.url, 'GET', `/book/api/public/${workspace.slug}/intro`)).status).toBe(200);
    const rows = await db.adminPool.query("SELECT key_id FROM gateway.rate_limit_counters WHERE key_id LIKE 'ip:%'");
    expect(rows.rows.length).toBeGreaterThan(0);
  });

  it('keeps the credential out of its logs, even from the page URL', async () => {
    await call(gw.url, 'GET', `/book/i/${CREDENTIAL}`);
    expect(gw.logs.join('\n')).not.toContain(CREDENTIAL);
  });
});
