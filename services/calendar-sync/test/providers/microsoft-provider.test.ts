import { ProviderError, type CalendarAccess, type OutgoingEvent } from '../../src/domain/calendar-provider';
import { BOOKING_UID_PROPERTY } from '../../src/providers/microsoft/graph-events';
import { createHttpsTransport, type HttpsTransport } from '../../src/providers/microsoft/https-transport';
import { MicrosoftProvider } from '../../src/providers/microsoft/microsoft-provider';
import { MicrosoftOAuth } from '../../src/providers/microsoft/oauth';
import { startFakeMicrosoft, type FakeMicrosoft } from '@sched/testing';
import { MemoryTokenSource } from '../support/memory-token-source';

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
/** Start of the UTC day `days` from today, plus `hours`. */
const at = (days: number, hours = 0, minutes = 0) => new Date(today + days * DAY + hours * 3_600_000 + minutes * 60_000);
const dateOf = (d: Date) => d.toISOString().slice(0, 10);

let fake: FakeMicrosoft;
let transport: HttpsTransport;
let oauth: MicrosoftOAuth;

beforeAll(async () => {
  fake = await startFakeMicrosoft();
  transport = createHttpsTransport({ ca: fake.ca });
  oauth = new MicrosoftOAuth({ clientId: fake.clientId, clientSecret: fake.clientSecret, authority: fake.authority, knownAuthorities: [fake.host], timeoutMs: 3000, transport });
});

afterAll(async () => {
  transport.close();
  await fake.close();
});

beforeEach(() => {
  fake.calls.length = 0;
  fake.pageLimit = 1000;
  fake.clearFailures();
});

/** A connection to the fake: a fresh refresh token, its own token source and adapter. */
function connect(opts: { timeoutMs?: number; calendarId?: string } = {}) {
  const refreshToken = fake.issueRefreshToken();
  const tokens = new MemoryTokenSource(oauth);
  const warnings: string[] = [];
  const provider = new MicrosoftProvider({ tokens, transport, timeoutMs: opts.timeoutMs ?? 4000, onWarning: (m) => warnings.push(m) });
  const access: CalendarAccess = { provider: 'microsoft', url: fake.url, username: 'alice@contoso.example', password: refreshToken, calendarUrl: opts.calendarId ?? fake.calendarId };
  return { provider, access, tokens, refreshToken, warnings };
}

const graphCalls = () => fake.calls.filter((c) => c.kind === 'graph');
const tokenCalls = () => fake.calls.filter((c) => c.kind === 'token');

function bookingEvent(id: string, start: Date, end: Date, sequence = 1, extra: Partial<OutgoingEvent> = {}): OutgoingEvent {
  return {
    uid: `${id}@scheduling-service`,
    objectName: `${id}.ics`,
    summary: 'Video call with Guest Person',
    description: `Booked by Guest Person <guest@example.com>.\nBooking: ${id}`,
    start,
    end,
    sequence,
    joinUrl: null,
    location: null,
    video: false,
    ...extra,
  };
}

let bookingSeq = 0;
const newBookingId = () => `bkg_msft${String(++bookingSeq).padStart(12, '0')}`;

describe('MicrosoftProvider busy times (calendarView)', () => {
  it('reads timed, all-day, recurring, cancelled and free events of the window, recurring ones expanded', async () => {
    const cal = fake.addCalendar({ name: 'Busy times' });
    const { provider, access } = connect({ calendarId: cal });
    const timed = fake.addEvent({ calendarId: cal, start: at(2, 9), end: at(2, 10) });
    const allDay = fake.addEvent({ calendarId: cal, start: dateOf(at(3)), end: dateOf(at(5)), showAs: 'oof' });
    const weekly = fake.addEvent({ calendarId: cal, start: at(1, 14), end: at(1, 15), rrule: 'FREQ=WEEKLY;COUNT=4', deletedOccurrences: [at(8, 14)] });
    const cancelled = fake.addEvent({ calendarId: cal, start: at(4, 9), end: at(4, 10), isCancelled: true });
    const free = fake.addEvent({ calendarId: cal, start: at(4, 11), end: at(4, 12), showAs: 'free' });
    fake.addEvent({ calendarId: cal, start: at(40, 9), end: at(40, 10) }); // outside the window

    const events = await provider.listEvents(access, { from: at(0), to: at(30) });

    const byUid = (uid: string) => events.filter((e) => e.uid === uid);
    expect(byUid(timed.iCalUId)).toEqual([{ uid: timed.iCalUId, timing: { kind: 'instant', start: at(2, 9), end: at(2, 10) }, transparent: false, cancelled: false }]);
    expect(byUid(allDay.iCalUId)).toEqual([{ uid: allDay.iCalUId, timing: { kind: 'date', start: dateOf(at(3)), end: dateOf(at(5)) }, transparent: false, cancelled: false }]);
    // 4 weekly occurrences, the second deleted from the series.
    expect(byUid(weekly.iCalUId).map((e) => e.timing)).toEqual([
      { kind: 'instant', start: at(1, 14), end: at(1, 15) },
      { kind: 'instant', start: at(15, 14), end: at(15, 15) },
      { kind: 'instant', start: at(22, 14), end: at(22, 15) },
    ]);
    expect(byUid(cancelled.iCalUId)[0]).toMatchObject({ cancelled: true, transparent: false });
    expect(byUid(free.iCalUId)[0]).toMatchObject({ cancelled: false, transparent: true });
    expect(events).toHaveLength(7);

    // One request, times asked for in UTC, only the fields busy times need.
    const [call] = graphCalls();
    expect(graphCalls()).toHaveLength(1);
    expect(String(call!.headers.prefer)).toContain('outlook.timezone="UTC"');
    expect(decodeURIComponent(call!.url)).toContain('$select=id,iCalUId,start,end,isAllDay,showAs,isCancelled,type');
  });

  it("gives this service's own events their Booking UID (from the extended property), so the domain can leave them out", async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const own = fake.addEvent({ calendarId: cal, start: at(2, 9), end: at(2, 10), extendedProperties: { [BOOKING_UID_PROPERTY]: 'bkg_ownownownownownown1@scheduling-service' } });
    const other = fake.addEvent({ calendarId: cal, start: at(2, 11), end: at(2, 12), extendedProperties: { 'String {00020329-0000-0000-C000-000000000046} Name Other': 'x' } });
    const events = await provider.listEvents(access, { from: at(0), to: at(10) });
    expect(events.map((e) => e.uid).sort()).toEqual(['bkg_ownownownownownown1@scheduling-service', other.iCalUId].sort());
    expect(own.iCalUId).not.toBe('bkg_ownownownownownown1@scheduling-service');
  });

  it('follows @odata.nextLink through every page, with the token on each', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    for (let i = 0; i < 5; i++) fake.addEvent({ calendarId: cal, start: at(2 + i, 9), end: at(2 + i, 10) });
    fake.pageLimit = 2;
    const events = await provider.listEvents(access, { from: at(0), to: at(30) });
    expect(events.map((e) => (e.timing as { start: Date }).start)).toEqual([2, 3, 4, 5, 6].map((d) => at(d, 9)));
    const views = graphCalls();
    expect(views).toHaveLength(3);
    expect(views.map((c) => new URL(c.url, fake.url).searchParams.get('$skip'))).toEqual([null, '2', '4']);
    for (const c of views) expect(c.headers.authorization).toMatch(/^Bearer /);
  });

  it('has no change marker: null without any request', async () => {
    const { provider, access } = connect();
    expect(await provider.changeMarker(access)).toBeNull();
    expect(fake.calls).toHaveLength(0);
  });
});

describe('MicrosoftProvider verify', () => {
  it('finds the default calendar, or checks the one given', async () => {
    const { provider, access } = connect();
    const input = { provider: 'microsoft' as const, url: fake.url, username: access.username, password: access.password };
    expect(await provider.verify({ ...input, calendarUrl: null })).toEqual({ calendarUrl: fake.calendarId });
    const other = fake.addCalendar();
    expect(await provider.verify({ ...input, calendarUrl: other })).toEqual({ calendarUrl: other });
  });

  it('refuses an unknown calendar and one the account cannot write to (calendar_not_found)', async () => {
    const { provider, access } = connect();
    const input = { provider: 'microsoft' as const, url: fake.url, username: access.username, password: access.password };
    await expect(provider.verify({ ...input, calendarUrl: 'AAMkADdoesnotexist' })).rejects.toMatchObject({ kind: 'calendar_not_found' });
    const readOnly = fake.addCalendar({ canEdit: false });
    await expect(provider.verify({ ...input, calendarUrl: readOnly })).rejects.toMatchObject({ kind: 'calendar_not_found' });
  });
});

describe('MicrosoftProvider event writes', () => {
  it('creates the event with the Booking UID property and a transactionId, then finds it again by that property', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const id = newBookingId();
    const written = await provider.putEvent(access, bookingEvent(id, at(3, 9), at(3, 10)));

    const [event] = fake.events(cal);
    expect(fake.events(cal)).toHaveLength(1);
    expect(event).toMatchObject({ subject: 'Video call with Guest Person', start: at(3, 9), end: at(3, 10), showAs: 'busy', isOnlineMeeting: false });
    expect(event!.extendedProperties).toEqual([{ id: BOOKING_UID_PROPERTY, value: `${id}@scheduling-service` }]);
    expect(event!.transactionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(written).toEqual({ objectUrl: `${fake.url}/v1.0/me/events/${encodeURIComponent(event!.id)}`, etag: `W/"${event!.changeKey}"` });
    // Lookup by the extended property, then the create.
    expect(graphCalls().map((c) => c.method)).toEqual(['GET', 'POST']);
    expect(decodeURIComponent(graphCalls()[0]!.url)).toContain(`$filter=singleValueExtendedProperties/Any(ep: ep/id eq '${BOOKING_UID_PROPERTY}' and ep/value eq '${id}@scheduling-service')`);
  });

  it('a redelivered write finds its event and updates it instead of making a second one', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const event = bookingEvent(newBookingId(), at(3, 9), at(3, 10));
    const first = await provider.putEvent(access, event);
    const second = await provider.putEvent(access, event);
    expect(fake.events(cal)).toHaveLength(1);
    expect(second.objectUrl).toBe(first.objectUrl);
    expect(graphCalls().map((c) => c.method)).toEqual(['GET', 'POST', 'GET', 'PATCH']);
  });

  it('a create whose answer was lost, retried while the lookup does not see it yet, is answered with the same event (transactionId)', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const event = bookingEvent(newBookingId(), at(3, 9), at(3, 10));
    fake.dropAnswers(1, 'POST'); // the create is carried out, its answer never arrives
    await expect(provider.putEvent(access, event)).rejects.toMatchObject({ kind: 'unavailable' });
    expect(fake.events(cal)).toHaveLength(1);

    fake.missLookups(1); // and the retry's lookup does not see the event yet
    const written = await provider.putEvent(access, event);
    expect(graphCalls().map((c) => c.method)).toEqual(['GET', 'POST', 'GET', 'POST']);
    expect(fake.events(cal)).toHaveLength(1);
    expect(written.objectUrl).toBe(`${fake.url}/v1.0/me/events/${encodeURIComponent(fake.events(cal)[0]!.id)}`);
  });

  it('updates the same event on reschedule (new times, same id) and deletes it on cancel; a second delete is fine', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const id = newBookingId();
    const created = await provider.putEvent(access, bookingEvent(id, at(3, 9), at(3, 10), 1));
    const moved = await provider.putEvent(access, bookingEvent(id, at(5, 13), at(5, 14), 2));
    expect(moved.objectUrl).toBe(created.objectUrl);
    expect(moved.etag).not.toBe(created.etag);
    expect(fake.events(cal)).toHaveLength(1);
    expect(fake.events(cal)[0]).toMatchObject({ start: at(5, 13), end: at(5, 14) });

    await provider.deleteEvent(access, moved.objectUrl);
    expect(fake.events(cal)).toHaveLength(0);
    await expect(provider.deleteEvent(access, moved.objectUrl)).resolves.toBeUndefined();
    expect(graphCalls().slice(-2).map((c) => c.method)).toEqual(['DELETE', 'DELETE']);
  });

  it('an event deleted by hand is created again on the next version', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const id = newBookingId();
    await provider.putEvent(access, bookingEvent(id, at(3, 9), at(3, 10), 1));
    await provider.deleteEvent(access, (await provider.putEvent(access, bookingEvent(id, at(3, 9), at(3, 10), 1))).objectUrl);
    await provider.putEvent(access, bookingEvent(id, at(4, 9), at(4, 10), 2));
    expect(fake.events(cal)).toHaveLength(1);
    expect(fake.events(cal)[0]).toMatchObject({ start: at(4, 9), end: at(4, 10) });
  });

  it('asks for a Teams meeting when the event wants an online meeting, and reports its join URL', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const written = await provider.putEvent(access, bookingEvent(newBookingId(), at(3, 9), at(3, 10), 1, { video: true }));
    const [event] = fake.events(cal);
    expect(event).toMatchObject({ isOnlineMeeting: true, onlineMeetingProvider: 'teamsForBusiness' });
    expect(written.joinUrl).toBe(event!.onlineMeeting!.joinUrl);
    expect(written.joinUrl).toMatch(/^https:\/\/teams\.microsoft\.com\/l\/meetup-join\//);
  });

  it('asks for no Teams meeting when none is asked: a meeting that is not video, or a video one with its own link', async () => {
    const cal = fake.addCalendar();
    const { provider, access } = connect({ calendarId: cal });
    const phone = await provider.putEvent(access, bookingEvent(newBookingId(), at(3, 9), at(3, 10)));
    const ownLink = await provider.putEvent(access, bookingEvent(newBookingId(), at(3, 11), at(3, 12), 1, { video: true, joinUrl: 'https://video.example.com/x' }));
    expect(fake.events(cal)).toHaveLength(2);
    for (const event of fake.events(cal)) expect(event).toMatchObject({ isOnlineMeeting: false, onlineMeeting: null });
    // No link made by the provider (WrittenEvent.joinUrl absent or null).
    expect([phone.joinUrl ?? null, ownLink.joinUrl ?? null]).toEqual([null, null]);
  });

  it('never sends the token to a stored event URL on another origin', async () => {
    const { provider, access } = connect();
    await expect(provider.deleteEvent(access, 'https://elsewhere.example/v1.0/me/events/AAMk')).rejects.toMatchObject({ kind: 'rejected' });
    await expect(provider.deleteEvent(access, `${fake.url}/v1.0/me/calendars/x`)).rejects.toMatchObject({ kind: 'rejected' });
    expect(graphCalls()).toHaveLength(0);
  });
});

describe('MicrosoftProvider throttling, tokens and outages', () => {
  it('retries a 429 after its Retry-After, and then succeeds', async () => {
    const { provider, access } = connect();
    fake.failNext(1, 429, { retryAfter: 1 });
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).resolves.toEqual(expect.any(Array));
    const [throttled, retried] = graphCalls();
    expect(graphCalls()).toHaveLength(2);
    // Retry-After: 1 → not sent again before a second has passed (a lower bound, not a speed figure).
    expect(retried!.at - throttled!.at).toBeGreaterThanOrEqual(990);
  });

  it('gives up at once (unavailable) when Retry-After does not fit in the operation deadline', async () => {
    const { provider, access } = connect({ timeoutMs: 2000 });
    fake.failNext(1, 429, { retryAfter: 30 });
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).rejects.toMatchObject({ kind: 'unavailable' });
    expect(graphCalls()).toHaveLength(1);
  });

  it('retries throttling at most 3 times, and nothing else retries underneath (4 requests, not more)', async () => {
    const { provider, access } = connect();
    fake.failNext(5, 503, { retryAfter: 0 });
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).rejects.toMatchObject({ kind: 'unavailable' });
    expect(graphCalls()).toHaveLength(4);
    fake.clearFailures();
  });

  it('a 500 is unavailable without retries', async () => {
    const { provider, access } = connect();
    fake.failNext(1, 500);
    await expect(provider.putEvent(access, bookingEvent(newBookingId(), at(3, 9), at(3, 10)))).rejects.toMatchObject({ kind: 'unavailable' });
    expect(graphCalls()).toHaveLength(1);
  });

  it('on a 401 asks the token source for a refreshed token once and retries with it', async () => {
    const { provider, access, tokens } = connect();
    await provider.listEvents(access, { from: at(0), to: at(1) });
    expect(tokens.refreshes).toBe(1);
    const before = tokens.token;
    fake.expireAccessTokens();
    fake.calls.length = 0;
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).resolves.toEqual(expect.any(Array));
    expect(tokens.refreshes).toBe(2);
    expect(tokens.token).not.toBe(before);
    expect(graphCalls().map((c) => c.headers.authorization)).toEqual([`Bearer ${before}`, `Bearer ${tokens.token}`]);
    expect(tokenCalls()).toHaveLength(1);
  });

  it('a second 401 after the refresh is auth_failed (one refresh, two requests)', async () => {
    const { provider, access, tokens } = connect();
    await tokens.accessToken(access);
    fake.failNext(2, 401);
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).rejects.toMatchObject({ kind: 'auth_failed' });
    expect(graphCalls()).toHaveLength(2);
    expect(tokens.refreshes).toBe(2);
  });

  it('a revoked refresh token surfaces as reauthorization_required', async () => {
    const { provider, access, tokens, refreshToken } = connect();
    await tokens.accessToken(access);
    fake.expireAccessTokens();
    fake.revokeRefreshToken(refreshToken);
    const err = await provider.putEvent(access, bookingEvent(newBookingId(), at(3, 9), at(3, 10))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'reauthorization_required' });
    expect(String((err as Error).message)).not.toContain(refreshToken);
  });

  it('provider down (connections refused) is unavailable', async () => {
    const { provider, access, tokens } = connect();
    await tokens.accessToken(access);
    await fake.goDown();
    try {
      await expect(provider.listEvents(access, { from: at(0), to: at(1) })).rejects.toMatchObject({ kind: 'unavailable' });
      await expect(provider.deleteEvent(access, `${fake.url}/v1.0/me/events/AAMkx`)).rejects.toMatchObject({ kind: 'unavailable' });
    } finally {
      await fake.comeBack();
    }
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).resolves.toEqual(expect.any(Array));
  });

  it('a provider that never answers is unavailable once the operation deadline passes', async () => {
    const { provider, access, tokens } = connect({ timeoutMs: 1000 });
    await tokens.accessToken(access);
    fake.hangNext(1);
    await expect(provider.listEvents(access, { from: at(0), to: at(1) })).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringMatching(/in time/) });
  });
});

describe('MicrosoftOAuth (token endpoint through MSAL)', () => {
  it('exchanges a refresh token for an access token with its expiry (and the rotated refresh token)', async () => {
    const rt = fake.issueRefreshToken();
    const result = await oauth.refresh(rt);
    expect(result.accessToken).toMatch(/^eyJ/);
    expect(result.expiresAt.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(result.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(result.refreshToken).toMatch(/^0\.A/);
    expect(result.refreshToken).not.toBe(rt);
    const [call] = tokenCalls();
    expect(call!.method).toBe('POST');
    // The access token works against Graph.
    const provider = new MicrosoftProvider({ tokens: { accessToken: async () => result.accessToken, refreshed: async () => result.accessToken }, transport, timeoutMs: 4000 });
    await expect(provider.verify({ provider: 'microsoft', url: fake.url, username: 'a', password: rt, calendarUrl: null })).resolves.toEqual({ calendarUrl: fake.calendarId });
  });

  it('invalid_grant (revoked or unknown refresh token) is reauthorization_required', async () => {
    const rt = fake.issueRefreshToken();
    fake.revokeRefreshToken(rt);
    await expect(oauth.refresh(rt)).rejects.toMatchObject({ kind: 'reauthorization_required' });
    await expect(oauth.refresh('0.Anot-a-token')).rejects.toMatchObject({ kind: 'reauthorization_required' });
  });

  it('a wrong client secret is auth_failed', async () => {
    const wrong = new MicrosoftOAuth({ clientId: fake.clientId, clientSecret: 'wrong', authority: fake.authority, knownAuthorities: [fake.host], timeoutMs: 3000, transport });
    await expect(wrong.refresh(fake.issueRefreshToken())).rejects.toMatchObject({ kind: 'auth_failed' });
  });

  it('after a 429 from the token endpoint MSAL refuses the same request until Retry-After, without asking again (unavailable)', async () => {
    const throttled = new MicrosoftOAuth({ clientId: fake.clientId, clientSecret: fake.clientSecret, authority: fake.authority, knownAuthorities: [fake.host], timeoutMs: 2000, transport });
    fake.failNext(1, 429, { on: 'token', retryAfter: 30 });
    await expect(throttled.refresh(fake.issueRefreshToken())).rejects.toMatchObject({ kind: 'unavailable' });
    expect(tokenCalls()).toHaveLength(1);
    await expect(throttled.refresh(fake.issueRefreshToken())).rejects.toMatchObject({ kind: 'unavailable' });
    expect(tokenCalls()).toHaveLength(1);
  });

  it('a token endpoint answering 503 or not reachable is unavailable', async () => {
    const fresh = () => new MicrosoftOAuth({ clientId: fake.clientId, clientSecret: fake.clientSecret, authority: fake.authority, knownAuthorities: [fake.host], timeoutMs: 2000, transport });
    fake.failNext(2, 503, { on: 'token', retryAfter: 1 });
    await expect(fresh().refresh(fake.issueRefreshToken())).rejects.toMatchObject({ kind: 'unavailable' });
    fake.clearFailures();
    await fake.goDown();
    try {
      await expect(fresh().refresh(fake.issueRefreshToken())).rejects.toMatchObject({ kind: 'unavailable' });
    } finally {
      await fake.comeBack();
    }
  });
});
