import { newId, toTimestamp } from '@sched/contracts';
import { secretBoxFromEnv } from '@sched/secrets';
import { createTestDatabase, testAmqp, type TestDatabase, type FakeGoogle, type FakeMicrosoft, startOAuthFakes, type OAuthFakes } from '@sched/testing';
import type { ProviderName } from '../src/domain/calendar-provider';
import { tokenAad } from '../src/domain/connection-status';
import { at, busyPath, call, cleanupBroker, SECRETS_KEY, startAvailabilityStub, startCalendarSync, type RunningCalendarSync, saveOAuthConnection } from './support/harness';

/**
 * Google and Microsoft connections inside calendar-sync as main.ts wires it (config → adapters in the
 * registry → the token store on Postgres), busy times read through the real adapters from the fakes.
 * The connection rows are saved through the store as the OAuth connect flow saves them (saveOAuthConnection).
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

beforeAll(async () => {
  [db, fakes, availability] = await Promise.all([createTestDatabase({ services: ['calendar-sync'] }), startOAuthFakes(), startAvailabilityStub()]);
  ({ google, microsoft } = fakes);
  svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url, env: fakes.env });
});

afterAll(async () => {
  await svc?.stop();
  await Promise.all([fakes?.close(), availability?.close()]);
  await cleanupBroker(amqp, [200, 400]);
  await db?.drop();
});

/** A host connected to the provider: the row as the connect flow will save it (refresh token sealed as the password). */
const connectedHost = (provider: ProviderName, refreshToken: string, calendarUrl: string, url: string): Promise<string> =>
  saveOAuthConnection({ db, availability, sealer, workspaceId: ws, provider, refreshToken, calendarUrl, url });

async function storedAccessToken(hostId: string): Promise<string> {
  const res = await db.adminPool.query('SELECT access_token_sealed FROM calendar_sync.connection_tokens WHERE host_id = $1', [hostId]);
  return sealer.open(res.rows[0].access_token_sealed, tokenAad(ws, hostId));
}

describe('busy times of OAuth connections, through the real adapters and the token store', () => {
  it('Google: events read from fake-google with a token from its token endpoint, kept for the next reads; no token in the logs', async () => {
    const refreshToken = google.issueRefreshToken('google-host@example.com');
    const hostId = await connectedHost('google', refreshToken, 'google-host@example.com', 'https://www.googleapis.com/');
    google.addEvent('google-host@example.com', { summary: 'dentist', start: { dateTime: at(2, 10).toISOString() }, end: { dateTime: at(2, 11).toISOString() } });
    google.addEvent('google-host@example.com', { summary: 'off', start: { date: at(4).toISOString().slice(0, 10) }, end: { date: at(5).toISOString().slice(0, 10) } });
    const tokensBefore = google.count('token');

    const res = await call(svc.url, 'GET', busyPath(ws, hostId, at(1), at(10)));
    expect(res.status).toBe(200);
    expect(res.body.data.intervals).toEqual([
      { start_at: toTimestamp(at(2, 10)), end_at: toTimestamp(at(2, 11)) },
      { start_at: toTimestamp(at(4)), end_at: toTimestamp(at(5)) },
    ]);
    // Stale snapshot → the refresher reads again: the stored token is reused (no second token call).
    await db.adminPool.query(`UPDATE calendar_sync.busy_snapshots SET fetched_at = now() - interval '1 hour'`);
    const listsBefore = google.count('events.list');
    expect(await svc.parts.refresher.runOnce()).toBeGreaterThanOrEqual(1);
    expect(google.count('events.list')).toBeGreaterThan(listsBefore);
    expect(google.count('token') - tokensBefore).toBe(1);

    const accessToken = await storedAccessToken(hostId);
    const logs = svc.logs.join('\n');
    expect(logs).not.toContain(accessToken);
    expect(logs).not.toContain(refreshToken);
    expect(logs).not.toContain(google.clientSecret);
  });

  it('Google: a revoked grant fails closed (503) and breaks the connection', async () => {
    const refreshToken = google.issueRefreshToken('revoked-host@example.com');
    const hostId = await connectedHost('google', refreshToken, 'revoked-host@example.com', 'https://www.googleapis.com/');
    google.revokeRefreshToken(refreshToken);
    const res = await call(svc.url, 'GET', busyPath(ws, hostId, at(1), at(10)));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('calendar_unavailable');
    const row = await db.adminPool.query('SELECT status, error_code FROM calendar_sync.calendar_connections WHERE host_id = $1', [hostId]);
    expect(row.rows[0]).toEqual({ status: 'reauthorization_required', error_code: 'auth_failed' });
  });

  it('Microsoft: events read from fake-microsoft over HTTPS (its CA from MICROSOFT_CA_FILE) with a token from its token endpoint', async () => {
    const calendarId = microsoft.addCalendar({ name: 'Work' });
    const refreshToken = microsoft.issueRefreshToken();
    const hostId = await connectedHost('microsoft', refreshToken, calendarId, microsoft.url);
    microsoft.addEvent({ calendarId, subject: 'review', start: at(3, 9), end: at(3, 10) });
    const res = await call(svc.url, 'GET', busyPath(ws, hostId, at(1), at(10)));
    expect(res.status).toBe(200);
    expect(res.body.data.intervals).toEqual([{ start_at: toTimestamp(at(3, 9)), end_at: toTimestamp(at(3, 10)) }]);
    const accessToken = await storedAccessToken(hostId);
    const logs = svc.logs.join('\n');
    expect(logs).not.toContain(accessToken);
    expect(logs).not.toContain(refreshToken);
    expect(logs).not.toContain(microsoft.clientSecret);
  });
});
