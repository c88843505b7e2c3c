import { checkTargetUrl, type AddressMode, type ResolveAll } from '@sched/address-policy';
import {
  calendarQuery,
  createAccount,
  createCalendarObject,
  deleteCalendarObject,
  ensureTrailingSlash,
  propfind,
  updateCalendarObject,
  type DAVResponse,
} from 'tsdav';
import {
  ProviderError,
  type CalendarAccess,
  type CalendarEvent,
  type CalendarProvider,
  type OutgoingEvent,
  type ProviderErrorKind,
  type VerifyInput,
  type WrittenEvent,
} from '../../domain/calendar-provider';
import { asProviderError, davFetch, statusError } from './dav-fetch';
import { CALDAV_TARGET_RULES, createHttpFetch, type HttpFetch } from './http-fetch';
import { eventsInWindow } from './ical-events';
import { toICalendar } from './ical-write';

export interface CalDavProviderOptions {
  /** Bound on one whole operation (discovery, a read, a write), all its requests together. */
  timeoutMs: number;
  /** Outbound address policy (CALENDAR_MODE): which addresses calendar servers may have. */
  mode: AddressMode;
  /** DNS of the policy's guarded lookup; tests fake it. */
  resolveAll?: ResolveAll;
  /** Told about calendar objects that cannot be parsed (they are skipped). Never given credentials. */
  onWarning?: (message: string, meta: Record<string, unknown>) => void;
  now?: () => Date;
}

/** iCalendar UTC form used in CalDAV time ranges: 20261122T093000Z. */
const davTime = (d: Date) => `${d.toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;

/** A property's text value; null when absent, empty or not text. */
function scalarProp(v: unknown): string | null {
  return v === undefined || v === null || typeof v === 'object' || v === '' ? null : String(v);
}

function keysOf(value: unknown): string[] {
  return value && typeof value === 'object' ? Object.keys(value) : [];
}

/** A multistatus answer has per-resource entries with props; anything else is one entry carrying the HTTP status. */
function failedRequest(responses: DAVResponse[]): DAVResponse | undefined {
  const [first] = responses;
  return responses.length === 1 && first && !first.ok && first.props === undefined ? first : undefined;
}

function calendarDataOf(r: DAVResponse): string | undefined {
  const data = (r.props as Record<string, unknown> | undefined)?.calendarData as unknown;
  if (typeof data === 'string') return data;
  const cdata = (data as { _cdata?: unknown; _text?: unknown } | undefined)?._cdata ?? (data as { _text?: unknown } | undefined)?._text;
  return typeof cdata === 'string' ? cdata : undefined;
}

/**
 * CalendarProvider over CalDAV with tsdav (as Cal.com uses it) and ical.js. Tested against Radicale;
 * only standard requests are used: PROPFIND for discovery and the ctag probe, calendar-query REPORT
 * with a time range (and expand, for servers that honour it), PUT with If-None-Match, DELETE.
 */
export class CalDavProvider implements CalendarProvider {
  private readonly now: () => Date;
  private readonly http: HttpFetch & { close(): void };

  constructor(private readonly opts: CalDavProviderOptions) {
    this.now = opts.now ?? (() => new Date());
    this.http = createHttpFetch({ mode: opts.mode, resolveAll: opts.resolveAll });
  }

  /** Drops the kept-alive connections to calendar servers. */
  close(): void {
    this.http.close();
  }

  /**
   * Runs one operation under one deadline; every failure comes out as a ProviderError. The
   * credentials are sent only to the origins of `urls`, the URLs the operator gave (dav-fetch.ts).
   */
  private async run<T>(
    creds: { username: string; password: string },
    urls: Array<string | null>,
    otherwise: ProviderErrorKind,
    op: (f: typeof fetch) => Promise<T>,
  ): Promise<T> {
    // The deadline as a timer cleared when the operation ends (AbortSignal.timeout's would fire, abort
    // and make its TimeoutError PROVIDER_TIMEOUT_MS after every operation, finished long before).
    const deadline = new AbortController();
    const { signal } = deadline;
    const timer = setTimeout(() => deadline.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), this.opts.timeoutMs);
    timer.unref();
    const origins = urls.filter((u): u is string => u !== null);
    try {
      return await op(davFetch(creds, signal, { fetch: this.http, origins }));
    } catch (err) {
      throw asProviderError(err, signal, otherwise);
    } finally {
      clearTimeout(timer);
    }
  }

  async verify(input: VerifyInput): Promise<{ calendarUrl: string }> {
    // Before any request: both URLs must be ones this mode may reach (IP literals, localhost names).
    // The answer is the one every unreachable server gets (no port-scan oracle); names are checked
    // on the addresses they resolve to, when connecting.
    for (const url of [input.url, input.calendarUrl]) {
      if (url !== null && !checkTargetUrl(url, this.opts.mode, CALDAV_TARGET_RULES).ok) {
        throw new ProviderError('unavailable', 'the server address is not allowed (outbound address policy)');
      }
    }
    return this.run(input, [input.url, input.calendarUrl], 'not_calendar_server', async (f) => {
      // RFC 6764 discovery: .well-known, the URL itself, then the server root; principal, then calendar home.
      const account = await createAccount({ account: { serverUrl: input.url, accountType: 'caldav' }, fetch: f });
      if (input.calendarUrl) {
        const calendarUrl = ensureTrailingSlash(input.calendarUrl);
        await this.probe(calendarUrl, f);
        return { calendarUrl };
      }
      return { calendarUrl: await this.firstCalendar(account.homeUrl!, f) };
    });
  }

  private async firstCalendar(homeUrl: string, f: typeof fetch): Promise<string> {
    const responses = await propfind({
      url: homeUrl,
      props: { 'd:resourcetype': {}, 'c:supported-calendar-component-set': {} },
      depth: '1',
      fetch: f,
    });
    const failed = failedRequest(responses);
    if (failed) throw statusError(failed.status, 'calendar home');
    for (const r of responses) {
      if (!r.href || !keysOf(r.props?.resourcetype).includes('calendar')) continue;
      const comps = r.props?.supportedCalendarComponentSet?.comp as unknown;
      const names = (Array.isArray(comps) ? comps : comps ? [comps] : []).map((c: { _attributes?: { name?: string } }) => c?._attributes?.name);
      if (names.length === 0 || names.includes('VEVENT')) return new URL(r.href, homeUrl).href;
    }
    throw new ProviderError('calendar_not_found', 'no calendar with events found in the calendar home');
  }

  /**
   * PROPFIND depth 0 on the calendar: is it a calendar, and its change marker (ctag, else sync-token).
   * The sync-token is asked for only when the server has no ctag: computing it can cost the server a
   * walk over every object of the calendar (Radicale does), on top of the ctag's.
   */
  private async probe(calendarUrl: string, f: typeof fetch): Promise<string | null> {
    const own = await this.calendarProps(calendarUrl, { 'd:resourcetype': {}, 'cs:getctag': {} }, f);
    if (!keysOf(own.props?.resourcetype).includes('calendar')) {
      throw new ProviderError('calendar_not_found', 'the URL is not a calendar collection');
    }
    // The ctag changes whenever an object does; the sync-token serves servers without one.
    const ctag = scalarProp(own.props?.getctag);
    if (ctag !== null) return `ctag:${ctag}`;
    const syncToken = scalarProp((await this.calendarProps(calendarUrl, { 'd:sync-token': {} }, f)).props?.syncToken);
    return syncToken !== null ? `sync:${syncToken}` : null;
  }

  private async calendarProps(calendarUrl: string, props: Record<string, unknown>, f: typeof fetch): Promise<DAVResponse> {
    const responses = await propfind({ url: calendarUrl, props, depth: '0', fetch: f });
    const failed = failedRequest(responses);
    if (failed) throw statusError(failed.status, 'calendar');
    const own = responses.find((r) => r.ok && r.props) ?? responses[0];
    if (!own?.ok) throw new ProviderError('calendar_not_found', 'the URL is not a calendar collection');
    return own;
  }

  changeMarker(access: CalendarAccess): Promise<string | null> {
    return this.run(access, [access.url, access.calendarUrl], 'rejected', (f) => this.probe(access.calendarUrl, f));
  }

  listEvents(access: CalendarAccess, window: { from: Date; to: Date }): Promise<CalendarEvent[]> {
    return this.run(access, [access.url, access.calendarUrl], 'rejected', async (f) => {
      const range = { _attributes: { start: davTime(window.from), end: davTime(window.to) } };
      const responses = await calendarQuery({
        url: access.calendarUrl,
        props: { 'd:getetag': {}, 'c:calendar-data': { 'c:expand': range } },
        filters: { 'comp-filter': { _attributes: { name: 'VCALENDAR' }, 'comp-filter': { _attributes: { name: 'VEVENT' }, 'time-range': range } } },
        depth: '1',
        fetch: f,
      });
      const failed = failedRequest(responses);
      if (failed) throw statusError(failed.status, 'calendar query');
      const events: CalendarEvent[] = [];
      for (const r of responses) {
        const ics = calendarDataOf(r);
        if (!ics) continue; // an empty multistatus, or an entry without data
        try {
          events.push(...eventsInWindow(ics, window));
        } catch (err) {
          // One malformed object must not make the host unbookable; it is skipped and reported.
          this.opts.onWarning?.('skipped a calendar object that could not be parsed', { object: r.href, error: (err as Error).message });
        }
      }
      return events;
    });
  }

  putEvent(access: CalendarAccess, event: OutgoingEvent): Promise<WrittenEvent> {
    return this.run(access, [access.url, access.calendarUrl], 'rejected', async (f) => {
      const calendar = { url: ensureTrailingSlash(access.calendarUrl) };
      const objectUrl = new URL(encodeURIComponent(event.objectName), calendar.url).href;
      const ics = toICalendar(event, this.now());
      // If-None-Match: * (tsdav): a second create of the same name is refused with 412 instead of
      // making a duplicate; the object is this service's own, so it is then simply replaced.
      let res = await createCalendarObject({ calendar, filename: encodeURIComponent(event.objectName), iCalString: ics, fetch: f });
      if (res.status === 412) {
        await res.body?.cancel();
        res = await updateCalendarObject({ calendarObject: { url: objectUrl, data: ics }, fetch: f });
      }
      await res.text().catch(() => undefined);
      if (res.status === 409) throw new ProviderError('calendar_not_found', 'the calendar collection does not exist (409)');
      if (!res.ok) throw statusError(res.status, 'event write');
      return { objectUrl, etag: res.headers.get('etag') };
    });
  }

  deleteEvent(access: CalendarAccess, objectUrl: string): Promise<void> {
    return this.run(access, [access.url, access.calendarUrl], 'rejected', async (f) => {
      const res = await deleteCalendarObject({ calendarObject: { url: objectUrl }, fetch: f });
      await res.text().catch(() => undefined);
      // Already gone (deleted by hand, or a retried delete): the calendar matches.
      if (res.ok || res.status === 404 || res.status === 410) return;
      throw statusError(res.status, 'event delete');
    });
  }
}
