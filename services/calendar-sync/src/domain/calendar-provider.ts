/**
 * The port every external calendar provider implements (CalDAV now; Google Calendar or Microsoft 365
 * later). The domain speaks only these types: no iCalendar text, no HTTP. A new provider is a new
 * adapter registered under its name (providers/provider-registry.ts); the fields below are generic
 * enough for OAuth providers too (`url` their API base, `username` the account, `password` the
 * secret such as a refresh token, `calendarUrl` the calendar's URL or id).
 */

export type ProviderName = 'caldav' | 'google' | 'microsoft';

/** How to reach one calendar. `calendarUrl` identifies the calendar for the provider. */
export interface CalendarAccess {
  provider: ProviderName;
  url: string;
  username: string;
  password: string;
  calendarUrl: string;
  /**
   * The stored connection these credentials come from (absent while a connection is being verified):
   * what an OAuth provider's token store keeps the connection's access token under.
   */
  connection?: { id: string; workspaceId: string; hostId: string };
  /** OAuth, while verifying at connect: the access token the code exchange gave (VerifyInput.accessToken). */
  accessToken?: string;
}

/**
 * Why a provider call failed:
 * - unavailable: no answer in time, connection refused, a 5xx: may pass, worth retrying;
 * - auth_failed: the server refused the credentials;
 * - calendar_not_found: the calendar (or any calendar, at discovery) does not exist or is not accessible;
 * - not_calendar_server: the URL answers but is not a calendar server;
 * - rejected: the server refused the request itself (a 4xx other than the above);
 * - reauthorization_required: an OAuth provider's token endpoint says the refresh token is no longer
 *   valid (`invalid_grant`: revoked by the user, expired, password changed): only connecting the
 *   calendar again (a new consent) fixes it.
 */
export type ProviderErrorKind = 'unavailable' | 'auth_failed' | 'calendar_not_found' | 'not_calendar_server' | 'rejected' | 'reauthorization_required';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

/**
 * When an event happens, as the provider stores it. `date`: an all-day event over local dates
 * [start, end) (end exclusive); `floating`: wall-clock times without a zone. Both are placed in the
 * host's time zone by the domain.
 */
export type EventTiming =
  | { kind: 'instant'; start: Date; end: Date }
  | { kind: 'date'; start: string; end: string }
  | { kind: 'floating'; start: string; end: string };

/** One occurrence of an event overlapping the window asked for (recurrences already expanded). */
export interface CalendarEvent {
  uid: string;
  timing: EventTiming;
  /** TRANSP:TRANSPARENT: shown as free. */
  transparent: boolean;
  /** STATUS:CANCELLED. */
  cancelled: boolean;
}

/** The event this service writes for a Booking. */
export interface OutgoingEvent {
  uid: string;
  /** Deterministic object name, so a repeated create finds the existing object. */
  objectName: string;
  summary: string;
  description: string;
  start: Date;
  end: Date;
  /** Booking version: later versions supersede earlier ones in calendar clients. */
  sequence: number;
  joinUrl: string | null;
  location: string | null;
  /**
   * A video meeting. A provider with its own conferencing (Google Meet, Microsoft Teams) adds a meeting
   * and reports its link in `WrittenEvent.joinUrl` when `joinUrl` is null (no conferencing template);
   * CalDAV ignores it.
   */
  video: boolean;
}

export interface WrittenEvent {
  objectUrl: string;
  etag: string | null;
  /** A join link the provider created for the event (`OutgoingEvent.video`: Meet, Teams); absent or null: none. */
  joinUrl?: string | null;
}

export interface VerifyInput {
  provider: ProviderName;
  url: string;
  username: string;
  password: string;
  /** The calendar to use; null: the first calendar found. */
  calendarUrl: string | null;
  /** OAuth: an access token just obtained with `password` (the connect flow), used instead of asking the token source. */
  accessToken?: string;
}

export interface CalendarProvider {
  /** Checks server, credentials and calendar by talking to the server; returns the calendar to use. */
  verify(input: VerifyInput): Promise<{ calendarUrl: string }>;
  /**
   * A cheap "did anything change?" marker of the calendar (CalDAV: getctag and sync-token, one
   * PROPFIND). null when the server offers none, so every refresh is a full read.
   */
  changeMarker(access: CalendarAccess): Promise<string | null>;
  /** Events overlapping [from, to), recurring ones expanded into occurrences. */
  listEvents(access: CalendarAccess, window: { from: Date; to: Date }): Promise<CalendarEvent[]>;
  /** Creates the event, or replaces it when an object of that name exists. */
  putEvent(access: CalendarAccess, event: OutgoingEvent): Promise<WrittenEvent>;
  /** Deletes the object; an object already gone is fine. */
  deleteEvent(access: CalendarAccess, objectUrl: string): Promise<void>;
}
