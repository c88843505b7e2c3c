import { createHash } from 'node:crypto';
import https from 'node:https';
import { newId, toTimestamp } from '@sched/contracts';
import { secretBoxFromEnv } from '@sched/secrets';
import { createTestDatabase, testAmqp, type TestDatabase, type FakeGoogle, type FakeMicrosoft, startOAuthFakes, type OAuthFakes } from '@sched/testing';
import { oauthStateAad } from '../src/domain/connection-status';
import { at, busyPath, call, cleanupBroker, outboxEvents, SECRETS_KEY, startAvailabilityStub, startCalendarSync, type RunningCalendarSync } from './support/harness';

/**
 * POST /admin/v1/workspaces/{ws}/hosts/{host}/calendar/oauth inside calendar-sync as main.ts wires it,
 * the Google and Microsoft OAuth clients configured against the fakes, states on real Postgres.
 */

let db: TestDatabase;
let google: FakeGoogle;
let microsoft: FakeMicrosoft;
let availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
let svc: RunningCalendarSync;
let fakes: OAuthFakes | undefined;
const amqp = testAmqp();
const ws = newId('wsp');
const sealer = secretBoxFromEnv({ SECRETS_KEY });
const REDIRECT = 'https://sched.example/oauth/callback';

beforeAll(async () => {
  [db, fakes, availability] = await Promise.all([createTestDatabase({ services: ['calendar-sync'] }), startOAuthFakes(), startAvailabilityStub()]);
  ({ google, microsoft } = fakes);
  svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url, env: { ...fakes.env, OAUTH_REDIRECT_URL: REDIRECT } });
});

afterAll(async () => {
  await svc?.stop();
  await Promise.all([fakes?.close(), availability?.close()]);
  await cleanupBroker(amqp, [200, 400]);
  await db?.drop();
});

const oauthPath = (host: string) => `/admin/v1/workspaces/${ws}/hosts/${host}/calendar/oauth`;

async function storedState(state: string): Promise<any> {
  const hash = createHash('sha256').update(state).digest('hex');
  const res = await db.adminPool.query('SELECT * FROM calendar_sync.oauth_states WHERE state_hash = $1', [hash]);
  return res.rows[0];
}

function expectPkce(url: URL, row: any, hostId: string): void {
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  const verifier = sealer.open(row.verifier_sealed, oauthStateAad(ws, hostId));
  expect(url.searchParams.get('code_challenge')).toBe(createHash('sha256').update(verifier).digest('base64url'));
}

describe('starting the OAuth connect flow', () => {
  it('Google: 201 with the authorization URL (client id, redirect URI, S256 challenge, offline access, consent, calendar.events); the state stored hashed for 10 minutes', async () => {
    const host = availability.addHost(ws);
    const before = Date.now();
    const res = await call(svc.url, 'POST', oauthPath(host.id), { provider: 'google', calendar_id: 'team@example.com' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.data).sort()).toEqual(['authorization_url', 'expires_at', 'provider']);
    expect(res.body.data.provider).toBe('google');
    const url = new URL(res.body.data.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(google.endpoints.oauth2AuthBaseUrl);
    expect(url.searchParams.get('client_id')).toBe(google.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('scope')).toBe('openid email https://www.googleapis.com/auth/calendar.events');
    const state = url.searchParams.get('state')!;
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await storedState(state);
    expect(row).toMatchObject({ workspace_id: ws, host_id: host.id, provider: 'google', calendar_id: 'team@example.com', used_at: null });
    expectPkce(url, row, host.id);
    const expiresAt = new Date(res.body.data.expires_at).getTime();
    expect(row.expires_at.getTime()).toBe(expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 10 * 60_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 10 * 60_000);
    // Neither the state nor the verifier in the clear, nor in the logs.
    expect(JSON.stringify(row)).not.toContain(state);
    expect(svc.logs.join('')).not.toContain(state);
  });

  it("Microsoft: 201 with the fake identity platform's authorize URL (client id, redirect URI, S256, Calendars.ReadWrite and offline_access)", async () => {
    const host = availability.addHost(ws);
    const res = await call(svc.url, 'POST', oauthPath(host.id), { provider: 'microsoft' });
    expect(res.status).toBe(201);
    const url = new URL(res.body.data.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${microsoft.authority}/oauth2/v2.0/authorize`);
    expect(url.searchParams.get('client_id')).toBe(microsoft.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT);
    expect(url.searchParams.get('response_type')).toBe('code');
    const scopes = url.searchParams.get('scope')!.split(' ');
    expect(scopes).toEqual(expect.arrayContaining(['https://graph.microsoft.com/Calendars.ReadWrite', 'offline_access']));
    const row = await storedState(url.searchParams.get('state')!);
    expect(row).toMatchObject({ workspace_id: ws, host_id: host.id, provider: 'microsoft', calendar_id: null, used_at: null });
    expectPkce(url, row, host.id);
  });

  it('an unknown host is 404; a bad body is 400 (caldav, an unknown field, an empty calendar id); nothing stored', async () => {
    const count = async () => Number((await db.adminPool.query('SELECT count(*) FROM calendar_sync.oauth_states')).rows[0].count);
    const before = await count();
    expect((await call(svc.url, 'POST', oauthPath(newId('hst')), { provider: 'google' })).status).toBe(404);
    const host = availability.addHost(ws);
    for (const body of [{ provider: 'caldav' }, { provider: 'google', redirect_uri: 'https://evil.example/' }, { provider: 'google', calendar_id: '' }, {}]) {
      const res = await call(svc.url, 'POST', oauthPath(host.id), body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect(await count()).toBe(before);
  });
});

describe('a provider whose OAuth client is not configured', () => {
  let bare: RunningCalendarSync;
  beforeAll(async () => {
    bare = await startCalendarSync({ db, amqp, availabilityUrl: availability.url });
  });
  afterAll(async () => {
    await bare?.stop();
  });

  it('is 422 invalid_reference on provider', async () => {
    const host = availability.addHost(ws);
    const res = await call(bare.url, 'POST', oauthPath(host.id), { provider: 'google' });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'invalid_reference', details: [{ field: 'provider', issue: 'not_configured' }] });
  });
});

/** The host's browser at the provider: consent, and the redirect back to OAUTH_REDIRECT_URL (not followed: that is the gateway). */
async function consent(authorizationUrl: string): Promise<URL> {
  const url = new URL(authorizationUrl);
  if (url.protocol === 'https:') {
    // fake-microsoft: HTTPS with its throwaway CA.
    return new Promise((resolve, reject) => {
      https
        .get(url, { ca: microsoft.ca }, (res) => {
          res.resume();
          expect(res.statusCode).toBe(302);
          resolve(new URL(res.headers.location!));
        })
        .on('error', reject);
    });
  }
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location')!);
}

async function start(hostId: string, provider: 'google' | 'microsoft', calendarId?: string): Promise<string> {
  const res = await call(svc.url, 'POST', oauthPath(hostId), { provider, ...(calendarId ? { calendar_id: calendarId } : {}) });
  expect(res.status).toBe(201);
  return res.body.data.authorization_url;
}

/** What the gateway's GET /oauth/callback hands over: the redirect's state and code (or error). */
function callback(back: URL, override: Record<string, string> = {}) {
  const body: Record<string, string> = { state: back.searchParams.get('state')! };
  const code = back.searchParams.get('code');
  const error = back.searchParams.get('error');
  if (code !== null) body.code = code;
  if (error !== null) body.error = error;
  return call(svc.url, 'POST', '/internal/v1/oauth/callback', { ...body, ...override });
}

describe('the OAuth callback (round trip through the fakes)', () => {
  it('Google: consent → code exchanged with the PKCE verifier → connection saved (refresh token sealed, url from config), token row kept, event sent; busy times work', async () => {
    google.consentAccount = `g-${newId('hst').slice(4).toLowerCase()}@example.com`;
    const host = availability.addHost(ws, { name: 'Grace <Host>', timezone: 'UTC' });
    const back = await consent(await start(host.id, 'google'));
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    const res = await callback(back);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ provider: 'google', host_id: host.id, host_name: 'Grace <Host>' });

    const conn = (await db.adminPool.query('SELECT * FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id])).rows[0];
    expect(conn).toMatchObject({ id: res.body.data.connection_id, provider: 'google', url: google.rootUrl, calendar_url: 'primary', status: 'connected', username: google.consentAccount });
    const refreshToken = sealer.open(conn.password_sealed, `calendar_sync.connection:${ws}:${host.id}`);
    expect(google.isRefreshTokenValid(refreshToken)).toBe(true);
    const tokens = (await db.adminPool.query('SELECT access_token_sealed FROM calendar_sync.connection_tokens WHERE host_id = $1', [host.id])).rows[0];
    expect(tokens.access_token_sealed).toEqual(expect.any(String));
    const events = (await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === host.id);
    expect(events.map((e) => e.data.status)).toEqual(['connected']);

    // The admin view shows the Google connection, without tokens.
    const view = await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/hosts/${host.id}/calendar`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ provider: 'google', username: google.consentAccount });
    expect(view.text).not.toContain(refreshToken);

    google.addEvent(google.consentAccount, { summary: 'x', start: { dateTime: at(2, 9).toISOString() }, end: { dateTime: at(2, 10).toISOString() } });
    const busy = await call(svc.url, 'GET', busyPath(ws, host.id, at(1), at(5)));
    expect(busy.status).toBe(200);
    expect(busy.body.data.intervals).toEqual([{ start_at: toTimestamp(at(2, 9)), end_at: toTimestamp(at(2, 10)) }]);

    const logs = svc.logs.join('\n');
    for (const secret of [back.searchParams.get('code')!, back.searchParams.get('state')!, refreshToken]) expect(logs).not.toContain(secret);
  });

  it('Microsoft: consent → code exchanged through MSAL → connection saved with the Graph root from config and the account name; busy times work', async () => {
    const calendarId = microsoft.addCalendar({ name: 'Bookings' });
    const host = availability.addHost(ws, { timezone: 'UTC' });
    const back = await consent(await start(host.id, 'microsoft', calendarId));
    const res = await callback(back);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ provider: 'microsoft', host_id: host.id });
    const conn = (await db.adminPool.query('SELECT * FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id])).rows[0];
    expect(conn).toMatchObject({ provider: 'microsoft', url: microsoft.url, calendar_url: calendarId, username: 'alice@contoso.example' });
    microsoft.addEvent({ calendarId, subject: 'review', start: at(3, 9), end: at(3, 10) });
    const busy = await call(svc.url, 'GET', busyPath(ws, host.id, at(1), at(5)));
    expect(busy.status).toBe(200);
    expect(busy.body.data.intervals).toEqual([{ start_at: toTimestamp(at(3, 9)), end_at: toTimestamp(at(3, 10)) }]);
    expect(svc.logs.join('\n')).not.toContain(back.searchParams.get('code')!);
  });

  it('a state is single use: the second callback with it is refused, and nothing changes', async () => {
    const host = availability.addHost(ws);
    const back = await consent(await start(host.id, 'google'));
    expect((await callback(back)).status).toBe(200);
    const again = await callback(back);
    expect(again.status).toBe(422);
    expect(again.body.error.details).toEqual([{ field: 'state', issue: 'unknown_or_used' }]);
  });

  it('an expired state is refused before the code is exchanged', async () => {
    const host = availability.addHost(ws);
    const back = await consent(await start(host.id, 'google'));
    const state = back.searchParams.get('state')!;
    await db.adminPool.query(`UPDATE calendar_sync.oauth_states SET expires_at = now() - interval '1 second' WHERE state_hash = $1`, [createHash('sha256').update(state).digest('hex')]);
    const tokenCalls = google.count('token');
    const res = await callback(back);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'state', issue: 'unknown_or_used' }]);
    expect(google.count('token')).toBe(tokenCalls);
    expect((await db.adminPool.query('SELECT count(*) FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id])).rows[0].count).toBe('0');
  });

  it('a tampered state is refused (and leaves the real one usable)', async () => {
    const host = availability.addHost(ws);
    const back = await consent(await start(host.id, 'google'));
    const state = back.searchParams.get('state')!;
    const tampered = `${state.slice(0, -1)}${state.endsWith('A') ? 'B' : 'A'}`;
    const res = await callback(back, { state: tampered });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'state', issue: 'unknown_or_used' }]);
    expect((await callback(back)).status).toBe(200);
  });

  it('access_denied at the provider: refused with that reason, the state used up', async () => {
    const host = availability.addHost(ws);
    const url = await start(host.id, 'google');
    google.denyConsent = true;
    const back = await consent(url).finally(() => (google.denyConsent = false));
    expect(back.searchParams.get('error')).toBe('access_denied');
    const res = await callback(back);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'error', issue: 'access_denied' }]);
    expect((await callback(back, { code: 'x' })).body.error.details).toEqual([{ field: 'state', issue: 'unknown_or_used' }]);
  });

  it('a code the token endpoint refuses (wrong PKCE verifier) is refused with the reason; nothing saved', async () => {
    const host = availability.addHost(ws);
    const back = await consent(await start(host.id, 'google'));
    // Another flow's verifier in place of this one's: the fake checks S256(verifier) against the challenge.
    const hash = createHash('sha256').update(back.searchParams.get('state')!).digest('hex');
    await db.adminPool.query('UPDATE calendar_sync.oauth_states SET verifier_sealed = $1 WHERE state_hash = $2', [sealer.seal('x'.repeat(43), oauthStateAad(ws, host.id)), hash]);
    const res = await callback(back);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'code', issue: 'code_refused' }]);
    expect((await db.adminPool.query('SELECT count(*) FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id])).rows[0].count).toBe('0');
  });

  it('the token endpoint down: refused as provider_unreachable', async () => {
    const host = availability.addHost(ws);
    const back = await consent(await start(host.id, 'google'));
    google.failNext(1, { status: 503, where: 'token' });
    const res = await callback(back);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'code', issue: 'provider_unreachable' }]);
  });

  it('DELETE revokes the Google grant at the fake; a failed revocation still deletes', async () => {
    const host = availability.addHost(ws);
    google.consentAccount = 'revoke-me@example.com';
    expect((await callback(await consent(await start(host.id, 'google')))).status).toBe(200);
    const conn = (await db.adminPool.query('SELECT password_sealed FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id])).rows[0];
    const refreshToken = sealer.open(conn.password_sealed, `calendar_sync.connection:${ws}:${host.id}`);
    const del = await call(svc.url, 'DELETE', `/admin/v1/workspaces/${ws}/hosts/${host.id}/calendar`);
    expect(del.status).toBe(204);
    expect(google.isRefreshTokenValid(refreshToken)).toBe(false);
    expect(svc.logs.join('\n')).not.toContain(refreshToken);

    const other = availability.addHost(ws);
    expect((await callback(await consent(await start(other.id, 'google')))).status).toBe(200);
    google.failNext(1, { status: 503, where: 'token' });
    const del2 = await call(svc.url, 'DELETE', `/admin/v1/workspaces/${ws}/hosts/${other.id}/calendar`);
    expect(del2.status).toBe(204);
    expect(svc.logs.join('\n')).toContain('could not revoke the OAuth grant');
  });

  it('DELETE of a Microsoft connection: 204, its tokens dropped, and no request to Microsoft (it has no revocation of one grant)', async () => {
    const host = availability.addHost(ws);
    expect((await callback(await consent(await start(host.id, 'microsoft')))).status).toBe(200);
    const conn = (await db.adminPool.query('SELECT id FROM calendar_sync.calendar_connections WHERE host_id = $1', [host.id])).rows[0];
    const tokenRows = async () => Number((await db.adminPool.query('SELECT count(*) FROM calendar_sync.connection_tokens WHERE connection_id = $1', [conn.id])).rows[0].count);
    expect(await tokenRows()).toBe(1);
    const requests = microsoft.calls.length;
    const del = await call(svc.url, 'DELETE', `/admin/v1/workspaces/${ws}/hosts/${host.id}/calendar`);
    expect(del.status).toBe(204);
    expect(microsoft.calls.length).toBe(requests);
    expect(await tokenRows()).toBe(0);
    expect((await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === host.id).map((e) => e.data.status)).toEqual(['connected', 'disconnected']);
  });
});
