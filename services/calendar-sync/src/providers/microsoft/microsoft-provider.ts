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
import {
  BUSY_FIELDS,
  EXPAND_BOOKING_UID,
  eventFields,
  filterByBookingUid,
  newEventBody,
  toCalendarEvent,
  wantsTeams,
  type GraphEvent,
  type GraphPage,
} from './graph-events';
import { GraphSession, graphError, isGraphStatus } from './graph-session';
import type { HttpsTransport } from './https-transport';

export interface MicrosoftProviderOptions {
  /** Access tokens of each connection (the connection's token store); the adapter never refreshes by itself. */
  tokens: AccessTokenSource;
  /** HTTPS to Graph (https-transport.ts); tests give one trusting their fake's CA. */
  transport: HttpsTransport;
  /** Bound on one whole operation (PROVIDER_TIMEOUT_MS): all its requests, retry waits and token calls. */
  timeoutMs: number;
  /** Told about events whose times cannot be placed (they are skipped). Never given tokens. */
  onWarning?: (message: string, meta: Record<string, unknown>) => void;
}

/** Items per calendarView page asked for; Graph may send fewer and an @odata.nextLink. */
const PAGE_SIZE = 500;
/** A calendarView of 92 days with more pages than this is refused rather than read without end. */
const MAX_PAGES = 200;
/** Graph paths after the version segment. */
const EVENTS_PATH = '/me/events/';

/**
 * CalendarProvider over Microsoft Graph v1.0 with the Graph JavaScript client. The connection's fields:
 * `url` the Graph root (https://graph.microsoft.com), `username` the account, `password` the refresh
 * token (read only by the token source), `calendarUrl` the Graph calendar id.
 *
 * Requests: GET /me/calendar or /me/calendars/{id} (verify); GET /me/calendars/{id}/calendarView with
 * `Prefer: outlook.timezone="UTC"`, following @odata.nextLink (busy times); GET …/events?$filter= on
 * the Booking UID extended property, then PATCH /me/events/{id} or POST …/events with transactionId
 * (writes); DELETE /me/events/{id} (cancel). Every request also sends `Prefer: IdType="ImmutableId"`,
 * so stored event ids survive moves inside the mailbox.
 *
 * Busy times come from calendarView rather than getSchedule: calendarView reads the connection's
 * calendar (getSchedule only a mailbox's default calendar), covers the whole 92-day snapshot in one
 * paged read (getSchedule caps a request at 62 days), keeps all-day events as dates (getSchedule gives
 * instants in one zone) and returns the extended property that marks this service's own events, which
 * the domain must leave out of busy times.
 */
export class MicrosoftProvider implements CalendarProvider {
  constructor(private readonly opts: MicrosoftProviderOptions) {}

  /** Runs one operation in a GraphSession (one deadline, one token); every failure comes out as a ProviderError. */
  private async run<T>(access: CalendarAccess, what: string, op: (s: GraphSession) => Promise<T>): Promise<T> {
    try {
      return await op(new GraphSession(access, this.opts));
    } catch (err) {
      throw asProviderError(graphError(err, what));
    }
  }

  async verify(input: VerifyInput): Promise<{ calendarUrl: string }> {
    const access: CalendarAccess = { ...input, calendarUrl: input.calendarUrl ?? '' };
    return this.run(access, 'calendar', async (s) => {
      const path = input.calendarUrl ? calendarPath(input.calendarUrl) : '/me/calendar';
      const calendar = (await s.call(
        (c) => c.api(path).select(['id', 'name', 'canEdit']),
        (r) => r.get(),
      )) as { id: string; canEdit?: boolean };
      // Events are written into it: a calendar shared read-only with the account cannot be used.
      if (calendar.canEdit === false) throw new ProviderError('calendar_not_found', 'the calendar is not writable for this account');
      return { calendarUrl: calendar.id };
    });
  }

  /**
   * null: Graph offers no cheap "did anything change?" for a calendar. A calendarView delta link is
   * bound to the window it was made for (the snapshot range moves every day) and answering it is a
   * read of its own, and the calendar's changeKey does not follow its events. Every refresh is a full
   * calendarView read (a page or a few).
   */
  changeMarker(_access: CalendarAccess): Promise<string | null> {
    return Promise.resolve(null);
  }

  listEvents(access: CalendarAccess, window: { from: Date; to: Date }): Promise<CalendarEvent[]> {
    return this.run(access, 'calendar view', async (s) => {
      const events: CalendarEvent[] = [];
      let page = (await s.call(
        (c) =>
          c
            .api(`${calendarPath(access.calendarUrl)}/calendarView`)
            .query({ startDateTime: window.from.toISOString(), endDateTime: window.to.toISOString() })
            .select(BUSY_FIELDS)
            .expand(EXPAND_BOOKING_UID)
            .top(PAGE_SIZE),
        (r) => r.get(),
      )) as GraphPage<GraphEvent>;
      for (let pages = 1; ; pages++) {
        for (const item of page.value) {
          const event = toCalendarEvent(item);
          if (event) events.push(event);
          else this.opts.onWarning?.('skipped a calendar event whose times are not in UTC', { event: item.id });
        }
        const next = page['@odata.nextLink'];
        if (!next) return events;
        // The token goes only to the connection's Graph origin.
        if (!s.sameOrigin(next)) throw new ProviderError('rejected', 'Graph handed out a next-page link on another origin');
        if (pages >= MAX_PAGES) throw new ProviderError('rejected', `the calendar view has more than ${MAX_PAGES} pages`);
        page = (await s.call(
          (c) => c.api(next),
          (r) => r.get(),
        )) as GraphPage<GraphEvent>;
      }
    });
  }

  putEvent(access: CalendarAccess, event: OutgoingEvent): Promise<WrittenEvent> {
    return this.run(access, 'event write', async (s) => {
      const events = `${calendarPath(access.calendarUrl)}/events`;
      // The event of this Booking, if any version of it was written before (a redelivery, a reschedule).
      const found = (await s.call(
        (c) => c.api(events).filter(filterByBookingUid(event.uid)).expand(EXPAND_BOOKING_UID).select(['id']).top(1),
        (r) => r.get(),
      )) as GraphPage<Pick<GraphEvent, 'id'>>;
      const existing = found.value[0];
      if (existing) {
        try {
          const updated = (await s.call(
            (c) => c.api(`${EVENTS_PATH}${encodeURIComponent(existing.id)}`),
            (r) => r.patch(eventFields(event)),
          )) as GraphEvent;
          return written(s, updated, event);
        } catch (err) {
          // Deleted between the lookup and the update: made again below.
          if (!isGraphStatus(err, 404)) throw err;
        }
      }
      // transactionId: a POST repeated after a lost answer gives back the event the first one made.
      const created = (await s.call(
        (c) => c.api(events),
        (r) => r.post(newEventBody(event)),
      )) as GraphEvent;
      return written(s, created, event);
    });
  }

  deleteEvent(access: CalendarAccess, objectUrl: string): Promise<void> {
    return this.run(access, 'event delete', async (s) => {
      const path = eventPathOf(s, objectUrl);
      try {
        await s.call(
          (c) => c.api(path),
          (r) => r.delete(),
        );
      } catch (err) {
        // Already gone (deleted by hand, or a retried delete): the calendar matches.
        if (isGraphStatus(err, 404) || isGraphStatus(err, 410)) return;
        throw err;
      }
    });
  }
}

function calendarPath(calendarId: string): string {
  return `/me/calendars/${encodeURIComponent(calendarId)}`;
}

/** The event's URL as stored in the sync record: absolute, on the connection's Graph origin. */
function written(s: GraphSession, e: GraphEvent, event: OutgoingEvent): WrittenEvent {
  return {
    objectUrl: new URL(`/v1.0${EVENTS_PATH}${encodeURIComponent(e.id)}`, s.root).href,
    etag: e['@odata.etag'] ?? e.changeKey ?? null,
    ...(wantsTeams(event) ? { joinUrl: e.onlineMeeting?.joinUrl ?? null } : {}),
  };
}

/** A stored event URL back to its Graph path; only URLs of this connection's Graph and of an event. */
function eventPathOf(s: GraphSession, objectUrl: string): string {
  const prefix = `/v1.0${EVENTS_PATH}`;
  if (s.sameOrigin(objectUrl)) {
    const url = new URL(objectUrl);
    if (url.pathname.startsWith(prefix) && url.pathname.length > prefix.length && url.search === '') return url.pathname.slice('/v1.0'.length);
  }
  throw new ProviderError('rejected', 'the stored event URL is not an event of this connection');
}

function asProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError('unavailable', 'Graph could not be used', { cause: err });
}
