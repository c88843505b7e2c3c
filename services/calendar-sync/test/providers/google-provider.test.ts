import { makeBooking, startFakeGoogle, type FakeGoogle } from '@sched/testing';
import { bookingEvent } from '../../src/domain/booking-event';
import { busyItemsFrom } from '../../src/domain/busy-times';
import { type CalendarAccess, type CalendarEvent } from '../../src/domain/calendar-provider';
import { googleEventId, uidFromGoogleEventId } from '../../src/providers/google/event-id';
import { GoogleCalendarProvider, type GoogleCalendarProviderOptions } from '../../src/providers/google/google-provider';
import { GoogleOAuth } from '../../src/providers/google/oauth';
import type { AccessTokenSource } from '../../src/providers/oauth/access-tokens';
import { providerFailure } from '../support/provider-failure';

/**
 * The Google adapter with the real @googleapis/calendar and google-auth-library, against the local
 * fake of Google (libs/testing/src/providers/fake-google.ts). The token source stands in for the token store of a
 * later part: a cache per refresh token in front of GoogleOAuth (the token endpoint of the fake).
 */

const ACCOUNT = 'host@example.com';
const window = { from: new Date('2026-12-01T00:00:00Z'), to: new Date('2026-12-15T00:00:00Z') };

let google: FakeGoogle;
let oauth: GoogleOAuth;

beforeAll(async () => {
  google = await startFakeGoogle();
  oauth = new GoogleOAuth({ clientId: google.clientId, clientSecret: google.clientSecret, endpoints: google.endpoints, timeoutMs: 2000 });
});
afterAll(() => google.close());

/** What the later token store does, minus the database: cached tokens, one refresh per rejection. */
function tokenSource(): AccessTokenSource & { refreshes: number } {
  const cache = new Map<string, string>();
  const source = {
    refreshes: 0,
    async accessToken(access: CalendarAccess, signal?: AbortSignal) {
      const cached = cache.get(access.password);
      if (cached) return cached;
      const { accessToken } = await oauth.refresh(access.password, signal);
      cache.set(access.password, accessToken);
      return accessToken;
    },
    async refreshed(access: CalendarAccess, rejected: string, signal?: AbortSignal) {
      source.refreshes++;
      if (cache.get(access.password) !== rejected) return cache.get(access.password)!;
      cache.delete(access.password);
      return source.accessToken(access, signal);
    },
  };
  return source;
}

function setup(opts: Partial<GoogleCalendarProviderOptions> = {}, calendarUrl = ACCOUNT) {
  const tokens = tokenSource();
  const provider = new GoogleCalendarProvider({ tokens, timeoutMs: 3000, rootUrl: google.rootUrl, backoffBaseMs: 50, ...opts });
  const access: CalendarAccess = { provider: 'google', url: 'https://www.googleapis.com/', username: ACCOUNT, password: google.issueRefreshToken(ACCOUNT), calendarUrl };
  return { provider, access, tokens };
}


const span = (e: CalendarEvent) =>
  e.timing.kind === 'instant' ? `${e.timing.start.toISOString()}/${e.timing.end.toISOString()}` : `${e.timing.kind}:${e.timing.start}/${e.timing.end}`;

let calendarSeq = 0;
const freshCalendar = (opts?: Parameters<FakeGoogle['addCalendar']>[1]) => {
  const id = `cal${++calendarSeq}@group.calendar.google.com`;
  google.addCalendar(id, opts);
  return id;
};

describe('event ids', () => {
  it('are base32hex, 5-1024 characters, deterministic, and read back to the UID', () => {
    const uid = bookingEvent(makeBooking(), null).uid;
    const id = googleEventId(uid);
    expect(id).toMatch(/^[a-v0-9]{5,1024}$/);
    expect(googleEventId(uid)).toBe(id);
    expect(uidFromGoogleEventId(id)).toBe(uid);
    expect(uidFromGoogleEventId('7kq3vbnh2s0g5e0n2o3ibg8j0c')).not.toBe(uid);
    expect(uidFromGoogleEventId('abc_20261201T100000Z')).toBeNull();
  });
});

describe('verify', () => {
  it('accepts the primary calendar and a writable one; refuses an unknown or read-only calendar', async () => {
    const { provider, access } = setup();
    const input = { ...access, calendarUrl: null };
    await expect(provider.verify(input)).resolves.toEqual({ calendarUrl: 'primary' });
    const writable = freshCalendar({ accessRole: 'writer' });
    await expect(provider.verify({ ...input, calendarUrl: writable })).resolves.toEqual({ calendarUrl: writable });
    expect((await providerFailure(provider.verify({ ...input, calendarUrl: 'nope@group.calendar.google.com' }))).kind).toBe('calendar_not_found');
    expect((await providerFailure(provider.verify({ ...input, calendarUrl: freshCalendar({ accessRole: 'reader' }) }))).kind).toBe('calendar_not_found');
  });
});

describe('busy times (events.list, singleEvents)', () => {
  it('reads timed, all-day and recurring events; flags transparent and declined ones; leaves out deleted ones', async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    google.addEvent(calendarId, { summary: 'timed', start: { dateTime: '2026-12-01T10:00:00+01:00' }, end: { dateTime: '2026-12-01T11:00:00+01:00' } });
    google.addEvent(calendarId, { summary: 'all day', start: { date: '2026-12-03' }, end: { date: '2026-12-05' } });
    google.addEvent(calendarId, {
      summary: 'weekly standup',
      start: { dateTime: '2026-11-24T08:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2026-11-24T08:15:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10', 'EXDATE:20261208T080000Z'],
    });
    google.addEvent(calendarId, { summary: 'free', transparency: 'transparent', start: { dateTime: '2026-12-02T10:00:00Z' }, end: { dateTime: '2026-12-02T11:00:00Z' } });
    google.addEvent(calendarId, {
      summary: 'declined',
      attendees: [{ email: ACCOUNT, self: true, responseStatus: 'declined' }],
      start: { dateTime: '2026-12-02T12:00:00Z' },
      end: { dateTime: '2026-12-02T13:00:00Z' },
    });
    google.addEvent(calendarId, { summary: 'deleted', status: 'cancelled', start: { dateTime: '2026-12-02T14:00:00Z' }, end: { dateTime: '2026-12-02T15:00:00Z' } });
    google.addEvent(calendarId, { summary: 'outside', start: { dateTime: '2027-01-02T14:00:00Z' }, end: { dateTime: '2027-01-02T15:00:00Z' } });

    const events = await provider.listEvents(access, window);
    const busy = busyItemsFrom(events).map((i) => `${i.kind}:${i.start}/${i.end}`);
    expect(busy.sort()).toEqual(
      [
        'instant:2026-12-01T09:00:00.000Z/2026-12-01T10:00:00.000Z',
        'date:2026-12-03/2026-12-05',
        // Tuesdays and Thursdays from 24 Nov: in the window 1, 3, 10 Dec (8 Dec excluded; 15 Dec is past the window).
        'instant:2026-12-01T08:00:00.000Z/2026-12-01T08:15:00.000Z',
        'instant:2026-12-03T08:00:00.000Z/2026-12-03T08:15:00.000Z',
        'instant:2026-12-10T08:00:00.000Z/2026-12-10T08:15:00.000Z',
      ].sort(),
    );
    const free = events.filter((e) => e.transparent).map(span);
    expect(free.sort()).toEqual(['2026-12-02T10:00:00.000Z/2026-12-02T11:00:00.000Z', '2026-12-02T12:00:00.000Z/2026-12-02T13:00:00.000Z']);
    // Occurrences of one series share the series' iCalUID.
    const standups = events.filter((e) => e.timing.kind === 'instant' && e.timing.start.toISOString().endsWith('T08:00:00.000Z'));
    expect(standups).toHaveLength(3);
    expect(new Set(standups.map((e) => e.uid)).size).toBe(1);
    expect(standups[0]!.uid).toMatch(/@google\.com$/);
  });

  it('follows nextPageToken over every page', async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    for (let day = 1; day <= 8; day++) {
      const d = String(day).padStart(2, '0');
      google.addEvent(calendarId, { start: { dateTime: `2026-12-${d}T10:00:00Z` }, end: { dateTime: `2026-12-${d}T10:30:00Z` } });
    }
    google.pageSize = 3;
    try {
      const before = google.count('events.list');
      const events = await provider.listEvents(access, window);
      expect(events).toHaveLength(8);
      expect(new Set(events.map(span)).size).toBe(8);
      expect(google.count('events.list') - before).toBe(3);
    } finally {
      google.pageSize = null;
    }
  });

  it('recognises the events it wrote by their id (the Booking UID), so the domain can leave them out', async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    const event = bookingEvent(makeBooking({ start_at: '2026-12-02T09:00:00.000Z' }), 'https://video.example.com/x');
    await provider.putEvent(access, event);
    const [read] = await provider.listEvents(access, window);
    expect(read).toMatchObject({ uid: event.uid, transparent: false, cancelled: false });
  });

  it('change marker: the same while nothing changes, another after any change', async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    const first = await provider.changeMarker(access);
    expect(first).toEqual(expect.any(String));
    expect(await provider.changeMarker(access)).toBe(first);
    google.addEvent(calendarId, { start: { dateTime: '2026-12-01T10:00:00Z' }, end: { dateTime: '2026-12-01T11:00:00Z' } });
    const second = await provider.changeMarker(access);
    expect(second).not.toBe(first);
    await provider.putEvent(access, bookingEvent(makeBooking({ start_at: '2026-12-02T09:00:00.000Z' }), null));
    expect(await provider.changeMarker(access)).not.toBe(second);
  });
});

describe('event writes', () => {
  it('writes one event per Booking: create, redelivered create, reschedule, cancel, cancel again', async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    const booking = makeBooking({ start_at: '2026-12-02T09:00:00.000Z', meeting: { type: 'phone', join_url: null } });
    const event = bookingEvent(booking, null);
    const id = googleEventId(event.uid);

    const written = await provider.putEvent(access, event);
    expect(written.objectUrl).toBe(`https://www.googleapis.com/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events/${id}`);
    expect(written.etag).toEqual(expect.any(String));
    expect(google.events(calendarId)).toHaveLength(1);
    expect(google.event(calendarId, id)).toMatchObject({
      status: 'confirmed',
      transparency: 'opaque',
      summary: event.summary,
      description: event.description,
      start: { dateTime: '2026-12-02T09:00:00.000Z' },
      end: { dateTime: '2026-12-02T09:30:00.000Z' },
    });

    // A redelivered create (or a crash after the write): the id exists, 409, patched in place.
    const again = await provider.putEvent(access, event);
    expect(again.objectUrl).toBe(written.objectUrl);
    expect(google.events(calendarId)).toHaveLength(1);

    const moved = bookingEvent({ ...booking, version: 2, start_at: '2026-12-03T15:00:00.000Z', end_at: '2026-12-03T16:00:00.000Z' }, null);
    await provider.putEvent(access, moved);
    expect(google.events(calendarId)).toHaveLength(1);
    expect(google.event(calendarId, id)).toMatchObject({ start: { dateTime: '2026-12-03T15:00:00.000Z' }, end: { dateTime: '2026-12-03T16:00:00.000Z' }, sequence: 1 });

    await provider.deleteEvent(access, written.objectUrl);
    expect(google.event(calendarId, id)).toMatchObject({ status: 'cancelled' });
    // Deleted already (410) or never there (404): the calendar matches.
    await provider.deleteEvent(access, written.objectUrl);
    await provider.deleteEvent(access, written.objectUrl.replace(id, googleEventId('bkg_neverwrittenxxxxxxxx@scheduling-service')));

    // Google keeps a deleted id taken (409 on insert): a write after the delete brings the event back.
    await provider.putEvent(access, moved);
    expect(google.events(calendarId)).toHaveLength(1);
    expect(google.event(calendarId, id)).toMatchObject({ status: 'confirmed', start: { dateTime: '2026-12-03T15:00:00.000Z' } });
  });

  it('asks Google Meet for a link for a video meeting without one, where the calendar allows it', async () => {
    const booking = makeBooking({ start_at: '2026-12-02T09:00:00.000Z' });
    const meetCalendar = freshCalendar();
    const { provider, access } = setup({}, meetCalendar);
    const written = await provider.putEvent(access, bookingEvent(booking, null));
    expect(written.joinUrl).toMatch(/^https:\/\/meet\.google\.com\//);
    expect(google.calls.filter((c) => c.endpoint === 'events.insert').at(-1)!.query.conferenceDataVersion).toBe('1');
    // The redelivered write finds the same event and the same link.
    expect((await provider.putEvent(access, bookingEvent(booking, null))).joinUrl).toBe(written.joinUrl);

    // A link of the Booking's own (or the host's template): no Meet asked for.
    const other = freshCalendar();
    const withLink = await provider.putEvent({ ...access, calendarUrl: other }, bookingEvent(makeBooking(), 'https://video.example.com/x'));
    expect(withLink.joinUrl).toBeNull();
    expect(google.calls.filter((c) => c.endpoint === 'events.insert').at(-1)!.query.conferenceDataVersion).toBeUndefined();

    // A calendar where Meet is not allowed: written without a link.
    const noMeet = freshCalendar({ meetAllowed: false });
    const plain = await provider.putEvent({ ...access, calendarUrl: noMeet }, bookingEvent(makeBooking(), null));
    expect(plain.joinUrl).toBeNull();
    expect(google.events(noMeet)).toHaveLength(1);

    // Meet still creating the conference (pending): no link yet.
    google.meetPending = true;
    try {
      const pending = await provider.putEvent({ ...access, calendarUrl: freshCalendar() }, bookingEvent(makeBooking(), null));
      expect(pending.joinUrl).toBeNull();
    } finally {
      google.meetPending = false;
    }
  });

  it('a calendar that is gone or read-only fails calendar_not_found; a bad event is rejected', async () => {
    const { provider, access } = setup({}, 'gone@group.calendar.google.com');
    const event = bookingEvent(makeBooking(), null);
    expect((await providerFailure(provider.putEvent(access, event))).kind).toBe('calendar_not_found');
    const readOnly = freshCalendar({ accessRole: 'reader' });
    expect((await providerFailure(provider.putEvent({ ...access, calendarUrl: readOnly }, event))).kind).toBe('calendar_not_found');
    const backwards = { ...event, end: new Date(event.start.getTime() - 60_000) };
    expect((await providerFailure(provider.putEvent({ ...access, calendarUrl: freshCalendar() }, backwards))).kind).toBe('rejected');
  });
});

describe('throttling and outages', () => {
  it('429 with Retry-After: retried after the time it names', async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    await provider.changeMarker(access); // token cached
    const before = google.calls.length;
    google.failNext(1, { status: 429, retryAfter: '1' });
    await provider.listEvents(access, window);
    const lists = google.calls.slice(before).filter((c) => c.endpoint === 'events.list');
    expect(lists).toHaveLength(2);
    expect(lists[1]!.at - lists[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("403 rateLimitExceeded / userRateLimitExceeded without Retry-After: retried with backoff, on POST too", async () => {
    const calendarId = freshCalendar();
    const { provider, access } = setup({}, calendarId);
    google.failNext(1, { status: 403, reason: 'rateLimitExceeded' });
    google.failNext(1, { status: 403, reason: 'userRateLimitExceeded' });
    await provider.putEvent(access, bookingEvent(makeBooking(), 'https://video.example.com/x'));
    expect(google.events(calendarId)).toHaveLength(1);
  });

  it('gives up after the bounded number of throttled retries, or at once when Retry-After passes the deadline: unavailable', async () => {
    const { provider, access } = setup({ throttleRetries: 2 }, freshCalendar());
    await provider.changeMarker(access);
    let before = google.count('events.list');
    // Exactly as many throttled answers as one request plus its two retries consume.
    google.failNext(3, { status: 429, retryAfter: '0' });
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('unavailable');
    expect(google.count('events.list') - before).toBe(3);
    await expect(provider.listEvents(access, window)).resolves.toEqual([]);

    before = google.count('events.list');
    google.failNext(1, { status: 429, retryAfter: '30' });
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('unavailable');
    expect(google.count('events.list') - before).toBe(1);
  });

  it('403 insufficientPermissions (the grant lacks the calendar scope) is auth_failed; a daily quota exhausted is unavailable', async () => {
    const { provider, access } = setup({}, freshCalendar());
    google.failNext(1, { status: 403, reason: 'insufficientPermissions' });
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('auth_failed');
    google.failNext(1, { status: 403, reason: 'quotaExceeded' });
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('unavailable');
  });

  it("a 5xx is not retried by the SDK (ours own the retries): one request, unavailable", async () => {
    const { provider, access } = setup({}, freshCalendar());
    await provider.changeMarker(access);
    const before = google.count('events.list');
    google.failNext(1, { status: 503 });
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('unavailable');
    expect(google.count('events.list') - before).toBe(1);
  });

  it('provider down (connection refused) or not answering: unavailable within the operation bound', async () => {
    const { provider, access } = setup({ timeoutMs: 800 }, freshCalendar());
    await provider.changeMarker(access);
    google.stallNext(1);
    let started = Date.now();
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(800 + 2000);

    await google.down();
    try {
      started = Date.now();
      const err = await providerFailure(provider.listEvents(access, window));
      expect(err.kind).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(800 + 2000);
    } finally {
      await google.up();
    }
    await expect(provider.listEvents(access, window)).resolves.toEqual([]);
  });
});

describe('tokens', () => {
  it('401 → one refreshed token → success', async () => {
    const { provider, access, tokens } = setup({}, freshCalendar());
    await provider.changeMarker(access);
    const refreshesBefore = google.count('token');
    google.expireAccessTokens();
    await expect(provider.listEvents(access, window)).resolves.toEqual([]);
    expect(tokens.refreshes).toBe(1);
    expect(google.count('token') - refreshesBefore).toBe(1);
  });

  it('a second 401 after the refresh: auth_failed, and no second refresh', async () => {
    const { provider, access, tokens } = setup({}, freshCalendar());
    await provider.changeMarker(access);
    google.failNext(2, { status: 401 });
    expect((await providerFailure(provider.listEvents(access, window))).kind).toBe('auth_failed');
    expect(tokens.refreshes).toBe(1);
  });

  it('a revoked refresh token (invalid_grant): reauthorization_required, at the first token or at the refresh after a 401', async () => {
    const first = setup({}, freshCalendar());
    google.revokeRefreshToken(first.access.password);
    expect((await providerFailure(first.provider.listEvents(first.access, window))).kind).toBe('reauthorization_required');

    const later = setup({}, freshCalendar());
    await later.provider.changeMarker(later.access);
    google.revokeRefreshToken(later.access.password); // its access tokens go with it: 401
    const err = await providerFailure(later.provider.putEvent(later.access, bookingEvent(makeBooking(), null)));
    expect(err.kind).toBe('reauthorization_required');
    expect(err.message).not.toContain(later.access.password);
  });
});
