import { calendar, type calendar_v3 } from '@googleapis/calendar';
import { bookingIdFromUid } from '../../domain/booking-event';
import {
  ProviderError,
  type CalendarAccess,
  type CalendarEvent,
  type CalendarProvider,
  type OutgoingEvent,
  type VerifyInput,
  type WrittenEvent,
} from '../../domain/calendar-provider';
import type { AccessTokenSource } from '../oauth/access-tokens';
import { GoogleApiError, isThrottled, providerErrorOf, readFailure, type ApiFailure } from './google-api';
import { googleEventId, uidFromGoogleEventId } from './event-id';

export interface GoogleCalendarProviderOptions {
  /** Access tokens per connection (the token store); the adapter never refreshes on its own. */
  tokens: AccessTokenSource;
  /** Bound on one whole operation: every request, page, throttling wait and token refresh in it. */
  timeoutMs: number;
  /**
   * API root (only scheme, host and port count; paths stay /calendar/v3/...). Default Google's.
   * Configuration, never a connection's `url`: the bearer tokens go only here.
   */
  rootUrl?: string;
  /** Throttled answers (429, 403 rate limit) retried per request, within the deadline. Default 3. */
  throttleRetries?: number;
  /** Wait before a throttled retry when the answer has no Retry-After: this, doubled each time. Default 500 ms. */
  backoffBaseMs?: number;
  /** Ask Google Meet for a link for video meetings that have none (where the calendar allows it). Default true. */
  createMeetLinks?: boolean;
}

/** The resource's canonical address, kept as the sync record's object URL (whatever rootUrl is). */
const CANONICAL_ROOT = 'https://www.googleapis.com/';
const EVENT_PATH = /\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)$/;
/** events.list page size: the API's maximum. */
const PAGE_SIZE = 2500;
/** A guard against a server that never stops paging: 100 pages of 2500 events. */
const MAX_PAGES = 100;
const PRIMARY = 'primary';

type MethodOptions = { headers: Record<string, string>; signal: AbortSignal; retry: false };

/** One provider operation: its deadline, and the token it currently uses (refreshed at most once). */
interface Operation {
  access: CalendarAccess;
  signal: AbortSignal;
  deadline: number;
  token: string | null;
  refreshed: boolean;
}

function eventUrl(calendarId: string, eventId: string): string {
  return `${CANONICAL_ROOT}calendar/v3/calendars/${encodeURIComponent(calendarId)}/events/${encodeURIComponent(eventId)}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A promise that also settles (rejects) when the signal aborts, for calls that may ignore it. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** One occurrence as the port sees it; null for an entry without times (a cancelled exception). */
export function toCalendarEvent(e: calendar_v3.Schema$Event): CalendarEvent | null {
  const { start, end } = e;
  let timing: CalendarEvent['timing'];
  if (start?.date && end?.date) timing = { kind: 'date', start: start.date, end: end.date };
  else if (start?.dateTime && end?.dateTime) timing = { kind: 'instant', start: new Date(start.dateTime), end: new Date(end.dateTime) };
  else return null;
  // This service's own events are recognised by their id (googleEventId of the Booking's UID);
  // Google gives them an iCalUID of its own.
  const own = e.id ? uidFromGoogleEventId(e.id) : null;
  const uid = own !== null && bookingIdFromUid(own) !== null ? own : (e.iCalUID ?? e.id ?? '');
  // An invitation the host declined does not block their time (as Google's own free/busy).
  const declined = e.attendees?.some((a) => a.self && a.responseStatus === 'declined') ?? false;
  return { uid, timing, transparent: e.transparency === 'transparent' || declined, cancelled: e.status === 'cancelled' };
}

/**
 * CalendarProvider over the Google Calendar API v3 with Google's client (@googleapis/calendar).
 * Calls: events.list (verify, change marker, busy times), events.insert with a deterministic id
 * (409 = already there → events.patch), events.patch, events.delete. Tokens come from `tokens`.
 *
 * Retries belong to this adapter, not to gaxios: gaxios retries only GET/PUT/DELETE (inserts are
 * POST, patches PATCH), backs off without reading Retry-After, knows neither Google's 403
 * rateLimitExceeded nor our operation deadline. So every request is sent with `retry: false`, and
 * throttled answers are retried here after Retry-After (or a doubling backoff), only while the
 * wait fits in the operation's deadline. 5xx and no answer are not retried here: the operation
 * fails `unavailable` and its caller (the write consumer's delays, the busy refresher) retries.
 */
export class GoogleCalendarProvider implements CalendarProvider {
  private readonly api: calendar_v3.Calendar;
  private readonly throttleRetries: number;
  private readonly backoffBaseMs: number;

  constructor(private readonly opts: GoogleCalendarProviderOptions) {
    // No `auth`: the bearer token is a per-request header from the token source, so the SDK's own
    // auth client never refreshes on its own (it would on a 401 when the expiry is unknown).
    // Node's own fetch (gaxios' documented `fetchImplementation`): by default gaxios loads node-fetch
    // with a dynamic import, which fails inside a VM context such as Jest's.
    this.api = calendar({ version: 'v3', rootUrl: opts.rootUrl ?? CANONICAL_ROOT, retry: false, fetchImplementation: fetch });
    this.throttleRetries = opts.throttleRetries ?? 3;
    this.backoffBaseMs = opts.backoffBaseMs ?? 500;
  }

  async verify(input: VerifyInput): Promise<{ calendarUrl: string }> {
    const calendarId = input.calendarUrl ?? PRIMARY;
    const access: CalendarAccess = {
      provider: input.provider,
      url: input.url,
      username: input.username,
      password: input.password,
      calendarUrl: calendarId,
      ...(input.accessToken ? { accessToken: input.accessToken } : {}),
    };
    return this.run(access, 'calendar check', async (op) => {
      const { data } = await this.call(op, (o) => this.api.events.list({ calendarId, maxResults: 1, fields: 'accessRole' }, o));
      // Booking events are written into the calendar: reading it is not enough.
      if (data.accessRole !== 'owner' && data.accessRole !== 'writer') {
        throw new ProviderError('calendar_not_found', 'the account cannot write events in this calendar');
      }
      return { calendarUrl: calendarId };
    });
  }

  /**
   * One events.list of at most one item, asking only for the collection's `updated` (last
   * modification of the calendar) and etag: any change of an event changes both.
   */
  changeMarker(access: CalendarAccess): Promise<string | null> {
    return this.run(access, 'change marker', async (op) => {
      const { data } = await this.call(op, (o) => this.api.events.list({ calendarId: access.calendarUrl, maxResults: 1, showDeleted: true, fields: 'etag,updated' }, o));
      return data.updated || data.etag ? `google:${data.updated ?? ''}|${data.etag ?? ''}` : null;
    });
  }

  /**
   * events.list with singleEvents (Google expands recurring events and applies their exceptions),
   * every page of the window. Cancelled occurrences are not listed (showDeleted false).
   */
  listEvents(access: CalendarAccess, window: { from: Date; to: Date }): Promise<CalendarEvent[]> {
    return this.run(access, 'busy read', async (op) => {
      const events: CalendarEvent[] = [];
      let pageToken: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const { data } = await this.call(op, (o) =>
          this.api.events.list(
            {
              calendarId: access.calendarUrl,
              timeMin: window.from.toISOString(),
              timeMax: window.to.toISOString(),
              singleEvents: true,
              maxResults: PAGE_SIZE,
              pageToken,
              fields: 'nextPageToken,items(id,iCalUID,status,transparency,start,end,attendees(self,responseStatus))',
            },
            o,
          ),
        );
        for (const item of data.items ?? []) {
          const event = toCalendarEvent(item);
          if (event) events.push(event);
        }
        if (!data.nextPageToken) return events;
        pageToken = data.nextPageToken;
      }
      throw new ProviderError('rejected', `busy read: more than ${MAX_PAGES} pages of events`);
    });
  }

  /**
   * events.insert with the id derived from the Booking; 409 (the id exists: a redelivery, a crash
   * after the write, a reschedule, or an event deleted earlier, since Google keeps deleted ids) →
   * events.patch of that id, which also undeletes it (status confirmed). One event per Booking.
   */
  putEvent(access: CalendarAccess, event: OutgoingEvent): Promise<WrittenEvent> {
    return this.run(access, 'event write', async (op) => {
      const calendarId = access.calendarUrl;
      const eventId = googleEventId(event.uid);
      const body: calendar_v3.Schema$Event = {
        summary: event.summary,
        description: event.description,
        location: event.location,
        start: { dateTime: event.start.toISOString(), timeZone: 'UTC' },
        end: { dateTime: event.end.toISOString(), timeZone: 'UTC' },
        status: 'confirmed',
        transparency: 'opaque',
        extendedProperties: { private: { bookingEventUid: event.uid } },
      };
      const meet = event.video && !event.joinUrl && (this.opts.createMeetLinks ?? true);
      let data: calendar_v3.Schema$Event;
      try {
        data = await this.insert(op, calendarId, { id: eventId, ...body }, meet ? eventId : null);
      } catch (err) {
        if (!(err instanceof GoogleApiError) || err.failure.status !== 409) throw err;
        ({ data } = await this.call(op, (o) => this.api.events.patch({ calendarId, eventId, sendUpdates: 'none', requestBody: body }, o)));
      }
      return { objectUrl: eventUrl(calendarId, eventId), etag: data.etag ?? null, joinUrl: meetLink(data) };
    });
  }

  /**
   * Insert; with `conferenceRequestId` also asks for a Meet link (conferenceDataVersion=1 and a
   * createRequest, the request id making a repeated ask idempotent). A calendar that does not
   * allow Meet answers 400 (invalid conference type): the event is then written without one.
   */
  private async insert(op: Operation, calendarId: string, body: calendar_v3.Schema$Event, conferenceRequestId: string | null): Promise<calendar_v3.Schema$Event> {
    if (conferenceRequestId !== null) {
      const conferenceData = { createRequest: { requestId: conferenceRequestId, conferenceSolutionKey: { type: 'hangoutsMeet' } } };
      try {
        const res = await this.call(op, (o) => this.api.events.insert({ calendarId, sendUpdates: 'none', conferenceDataVersion: 1, requestBody: { ...body, conferenceData } }, o));
        return res.data;
      } catch (err) {
        // "Invalid conference type value.": Meet is not allowed here. Any other refusal stands.
        if (!(err instanceof GoogleApiError) || err.failure.status !== 400 || !/conference/i.test(err.failure.message)) throw err;
      }
    }
    const res = await this.call(op, (o) => this.api.events.insert({ calendarId, sendUpdates: 'none', requestBody: body }, o));
    return res.data;
  }

  /** events.delete; already gone (404, or 410 for an event deleted before) is fine. */
  deleteEvent(access: CalendarAccess, objectUrl: string): Promise<void> {
    return this.run(access, 'event delete', async (op) => {
      const match = EVENT_PATH.exec(new URL(objectUrl).pathname);
      if (!match) throw new ProviderError('rejected', 'event delete: not a Google Calendar event address');
      const [calendarId, eventId] = [decodeURIComponent(match[1]!), decodeURIComponent(match[2]!)];
      try {
        await this.call(op, (o) => this.api.events.delete({ calendarId, eventId, sendUpdates: 'none' }, o));
      } catch (err) {
        if (err instanceof GoogleApiError && (err.failure.status === 404 || err.failure.status === 410)) return;
        throw err;
      }
    });
  }

  /** Runs one operation under one deadline; every failure comes out as a ProviderError. */
  private async run<T>(access: CalendarAccess, what: string, body: (op: Operation) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    const op: Operation = { access, signal, deadline: Date.now() + this.opts.timeoutMs, token: null, refreshed: false };
    try {
      return await body(op);
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if (err instanceof GoogleApiError) throw providerErrorOf(err.failure, what);
      // No `cause`: the SDK's error carries the request, bearer token included.
      if (signal.aborted) throw new ProviderError('unavailable', `${what}: Google Calendar did not answer in time`);
      const code = (err as { code?: unknown } | null)?.code;
      throw new ProviderError('unavailable', `${what}: Google Calendar could not be reached${typeof code === 'string' ? ` (${code})` : ''}`);
    }
  }

  /**
   * One API request with the operation's token: a 401 gets one refreshed token and one more try
   * (a second 401 is auth_failed); a throttled answer is retried after Retry-After (else the
   * backoff) at most `throttleRetries` times and only when the wait ends before the deadline.
   * Other failed answers are thrown as GoogleApiError for the caller to read; no answer at all is
   * thrown as it came (run() makes it `unavailable`).
   */
  private async call<T>(op: Operation, request: (options: MethodOptions) => Promise<{ data: T }>): Promise<{ data: T }> {
    for (let throttled = 0; ; ) {
      op.token ??= await abortable(this.opts.tokens.accessToken(op.access, op.signal), op.signal);
      const token = op.token;
      let failure: ApiFailure;
      try {
        return await request({ headers: { authorization: `Bearer ${token}` }, signal: op.signal, retry: false });
      } catch (err) {
        failure = readFailure(err, Date.now());
        if (failure.status === null) throw err;
      }
      if (failure.status === 401) {
        if (op.refreshed) throw new ProviderError('auth_failed', 'Google Calendar refused the access token again after a refresh (401)');
        op.refreshed = true;
        op.token = await abortable(this.opts.tokens.refreshed(op.access, token, op.signal), op.signal);
        continue;
      }
      if (isThrottled(failure) && throttled < this.throttleRetries) {
        const wait = failure.retryAfterMs ?? this.backoffBaseMs * 2 ** throttled;
        throttled++;
        if (Date.now() + wait < op.deadline) {
          await sleep(wait, op.signal);
          continue;
        }
      }
      throw new GoogleApiError(failure);
    }
  }
}

/** The Meet link of a written event; null when none was asked for or its creation is still pending. */
function meetLink(e: calendar_v3.Schema$Event): string | null {
  if (e.conferenceData?.createRequest?.status?.statusCode === 'pending') return null;
  const video = e.conferenceData?.entryPoints?.find((p) => p.entryPointType === 'video')?.uri;
  return e.hangoutLink ?? video ?? null;
}
