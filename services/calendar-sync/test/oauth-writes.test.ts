import { newId, toTimestamp, type Booking } from '@sched/contracts';
import { secretBoxFromEnv } from '@sched/secrets';
import { createTestDatabase, makeBooking, startOAuthFakes, testAmqp, waitFor, type OAuthFakes, type TestDatabase } from '@sched/testing';
import type { ProviderName } from '../src/domain/calendar-provider';
import { tokenAad } from '../src/domain/connection-status';
import { googleEventId } from '../src/providers/google/event-id';
import { at, call, cleanupBroker, outboxEvents, SECRETS_KEY, startAvailabilityStub, startCalendarSync, startPublisher, type RunningCalendarSync, saveOAuthConnection } from './support/harness';

/**
 * Calendar writes of Google and Microsoft connections inside calendar-sync as main.ts wires it (booking.*
 * consumer → domain → real adapters → token store on Postgres → the fakes), and what a revoked grant
 * does to them (issue 19: "invalid_grant marks the connection reauthorization_required, fails closed,
 * emits calendar.failed for pending writes with a clear error_code, and shows on the connection's
 * status"): every write waiting for the connection fails at once with `calendar.sync_failed`
 * `auth_failed` (booking turns it into `calendar.failed`), no retries, and the connection goes to
 * `reauthorization_required` (error_code `auth_failed`) on the admin API, with one `calendar.connection_updated`
 * (status `error`: availability tells only connected from broken).
 */

const RETRY_DELAYS = [200, 400];

let db: TestDatabase;
let fakes: OAuthFakes;
let availability: Awaited<ReturnType<typeof startAvailabilityStub>>;
let svc: RunningCalendarSync;
let publisher: Awaited<ReturnType<typeof startPublisher>>;
const amqp = testAmqp();
const ws = newId('wsp');
const sealer = secretBoxFromEnv({ SECRETS_KEY });

beforeAll(async () => {
  [db, fakes, availability] = await Promise.all([createTestDatabase({ services: ['calendar-sync'] }), startOAuthFakes(), startAvailabilityStub()]);
  svc = await startCalendarSync({ db, amqp, availabilityUrl: availability.url, env: { ...fakes.env, CALENDAR_WRITE_RETRY_DELAYS_MS: RETRY_DELAYS.join(',') } });
  publisher = await startPublisher(amqp);
});

afterAll(async () => {
  await publisher?.broker.close();
  await svc?.stop();
  await Promise.all([fakes?.close(), availability?.close()]);
  await cleanupBroker(amqp, RETRY_DELAYS);
  await db?.drop();
});

/** A host connected to the provider as the connect flow saves it (refresh token sealed as the password); no conferencing template. */
const connectedHost = (provider: ProviderName, refreshToken: string, calendarUrl: string): Promise<string> =>
  saveOAuthConnection({
    db,
    availability,
    sealer,
    workspaceId: ws,
    provider,
    refreshToken,
    calendarUrl,
    url: provider === 'google' ? fakes.google.rootUrl : fakes.microsoft.url,
    host: { conferencing_url_template: null },
  });

async function resultFor(booking: Booking) {
  return waitFor(
    async () =>
      (await outboxEvents(db)).find((e) => (e.type === 'calendar.synced' || e.type === 'calendar.sync_failed') && e.data.booking_id === booking.id && e.data.booking_version === booking.version) ?? null,
    { timeoutMs: 10_000 },
  );
}

/** The connection as the admin API shows it (status, error_code) and the connection_updated events published. */
async function connectionState(hostId: string) {
  const res = await call(svc.url, 'GET', `/admin/v1/workspaces/${ws}/hosts/${hostId}/calendar`);
  expect(res.status).toBe(200);
  const row = { status: res.body.data.status, error_code: res.body.data.error_code };
  const updates = (await outboxEvents(db, 'calendar.connection_updated')).filter((e) => e.data.host_id === hostId).map((e) => `${e.data.status}:${e.data.error_code}`);
  return { row, updates };
}

/**
 * Two Bookings published for a host whose grant is gone: each fails at once (the first attempt records
 * calendar.sync_failed auth_failed, the consumer's retries are not used), and the connection is
 * reauthorization_required with one connection_updated. Resolves with the two Bookings.
 */
async function pendingWritesFailAtOnce(hostId: string): Promise<Booking[]> {
  const pending = [makeBooking({ host_id: hostId, start_at: toTimestamp(at(4, 9)) }), makeBooking({ host_id: hostId, start_at: toTimestamp(at(4, 11)) })];
  for (const b of pending) await publisher.publish('booking.created', ws, b);
  for (const b of pending) {
    expect(await resultFor(b)).toMatchObject({ type: 'calendar.sync_failed', data: { booking_id: b.id, booking_version: 1, error_code: 'auth_failed' } });
    expect(attempts(b)).toEqual([1]);
  }
  expect(await connectionState(hostId)).toEqual({ row: { status: 'reauthorization_required', error_code: 'auth_failed' }, updates: ['connected:null', 'error:auth_failed'] });
  return pending;
}

async function storedAccessToken(hostId: string): Promise<string> {
  const res = await db.adminPool.query('SELECT access_token_sealed FROM calendar_sync.connection_tokens WHERE host_id = $1', [hostId]);
  return sealer.open(res.rows[0].access_token_sealed, tokenAad(ws, hostId));
}

/** The consumer's attempts at one Booking version, from its log lines. */
function attempts(booking: Booking): number[] {
  return svc.logs
    .flatMap((chunk) => chunk.split('\n').filter(Boolean))
    .map((l) => JSON.parse(l) as { booking_id?: string; booking_version?: number; attempt?: number; msg?: string })
    .filter((l) => l.booking_id === booking.id && l.booking_version === booking.version && typeof l.attempt === 'number')
    .map((l) => l.attempt!);
}

describe('Google: writes through the service, then a revoked grant', () => {
  it('writes the event (Meet link as join_url), then, the grant revoked, fails every pending write at once with auth_failed and breaks the connection once', async () => {
    const account = 'writer@example.com';
    const refreshToken = fakes.google.issueRefreshToken(account);
    const hostId = await connectedHost('google', refreshToken, account);

    const first = makeBooking({ host_id: hostId, start_at: toTimestamp(at(3, 9)) });
    await publisher.publish('booking.created', ws, first);
    const synced = await resultFor(first);
    expect(synced).toMatchObject({ type: 'calendar.synced', data: { status: 'synced', join_url: expect.stringMatching(/^https:\/\/meet\.google\.com\//) } });
    expect(fakes.google.event(account, googleEventId(`${first.id}@scheduling-service`))).toMatchObject({ status: 'confirmed', start: { dateTime: first.start_at } });
    const accessToken = await storedAccessToken(hostId);

    // The host removes the app's access in their Google account: the refresh token is dead, and so is the access token.
    fakes.google.revokeRefreshToken(refreshToken);
    fakes.google.expireAccessTokens();
    const pending = await pendingWritesFailAtOnce(hostId);
    // Nothing was written for them.
    for (const b of pending) expect(fakes.google.event(account, googleEventId(`${b.id}@scheduling-service`))).toBeUndefined();

    const logs = svc.logs.join('\n');
    for (const secret of [refreshToken, accessToken, fakes.google.clientSecret]) expect(logs).not.toContain(secret);
  });
});

describe('Microsoft: writes through the service, then a revoked grant', () => {
  it('writes the event (Teams link as join_url), then, consent withdrawn, fails every pending write at once with auth_failed and breaks the connection once', async () => {
    const calendarId = fakes.microsoft.addCalendar({ name: 'Writes' });
    const refreshToken = fakes.microsoft.issueRefreshToken();
    const hostId = await connectedHost('microsoft', refreshToken, calendarId);

    const first = makeBooking({ host_id: hostId, start_at: toTimestamp(at(3, 9)) });
    await publisher.publish('booking.created', ws, first);
    expect(await resultFor(first)).toMatchObject({ type: 'calendar.synced', data: { status: 'synced', join_url: expect.stringMatching(/^https:\/\//) } });
    expect(fakes.microsoft.events(calendarId).filter((e) => e.extendedProperties.some((p) => p.value === `${first.id}@scheduling-service`))).toHaveLength(1);
    const accessToken = await storedAccessToken(hostId);

    // Consent withdrawn: every refresh token of the grant (the rotated one the store now holds too) is refused.
    fakes.microsoft.revokeGrant(refreshToken);
    fakes.microsoft.expireAccessTokens();
    const pending = await pendingWritesFailAtOnce(hostId);
    // Nothing was written for them.
    for (const b of pending) expect(fakes.microsoft.events(calendarId).filter((e) => e.extendedProperties.some((p) => p.value === `${b.id}@scheduling-service`))).toHaveLength(0);

    const logs = svc.logs.join('\n');
    for (const secret of [refreshToken, accessToken, fakes.microsoft.clientSecret]) expect(logs).not.toContain(secret);
  });
});
