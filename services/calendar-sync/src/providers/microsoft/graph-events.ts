import { createHash } from 'node:crypto';
import type { CalendarEvent, OutgoingEvent } from '../../domain/calendar-provider';

/**
 * The single-value extended property holding the Booking event's UID (`<booking_id>@scheduling-service`)
 * on every event this service writes: Graph has no client-chosen event id, so this is how an event is
 * found again (`$filter` on it) and how own events are told apart in busy reads (`$expand` of it).
 * The GUID is this service's own property-set id; it never changes.
 */
export const BOOKING_UID_PROPERTY = 'String {6f1c5d0e-3b7a-4c1e-9a52-8d2f4b7e6a13} Name SchedulingServiceBookingUid';

/** `$expand` that brings back only our property (extended properties are returned only when expanded). */
export const EXPAND_BOOKING_UID = `singleValueExtendedProperties($filter=id eq '${BOOKING_UID_PROPERTY}')`;

/** `$filter` finding the event written for a Booking UID (OData string literal: quotes doubled). */
export function filterByBookingUid(uid: string): string {
  return `singleValueExtendedProperties/Any(ep: ep/id eq '${BOOKING_UID_PROPERTY}' and ep/value eq '${uid.replace(/'/g, "''")}')`;
}

/** Fields read for busy times: nothing about the event's content. */
export const BUSY_FIELDS = ['id', 'iCalUId', 'start', 'end', 'isAllDay', 'showAs', 'isCancelled', 'type'];

export interface GraphDateTime {
  dateTime: string;
  timeZone: string;
}

export interface GraphEvent {
  id: string;
  iCalUId?: string;
  start: GraphDateTime;
  end: GraphDateTime;
  isAllDay?: boolean;
  showAs?: string;
  isCancelled?: boolean;
  changeKey?: string;
  '@odata.etag'?: string;
  onlineMeeting?: { joinUrl?: string | null } | null;
  singleValueExtendedProperties?: Array<{ id: string; value: string }>;
}

export interface GraphPage<T> {
  value: T[];
  '@odata.nextLink'?: string;
}

/** Shown as available in Outlook's scheduling: these leave the host free. */
const FREE = new Set(['free', 'workingElsewhere']);

function isUtc(zone: string): boolean {
  return zone === 'UTC' || zone === 'Etc/UTC' || zone === 'Etc/GMT';
}

/** Graph's `2026-11-25T09:00:00.0000000` in UTC as an instant. */
function utcInstant(value: GraphDateTime): Date {
  return new Date(`${value.dateTime.slice(0, 23)}Z`);
}

/**
 * One calendarView item as a CalendarEvent, or null when its times cannot be placed (a zone other
 * than the UTC asked for with `Prefer: outlook.timezone="UTC"`). All-day events keep their dates
 * (`{kind:'date'}`, placed in the host's zone by the domain); recurring series come expanded into
 * occurrences by calendarView. The UID is the Booking UID on events this service wrote (so the domain
 * leaves them out of busy times), else Graph's iCalUId.
 */
export function toCalendarEvent(e: GraphEvent): CalendarEvent | null {
  const own = e.singleValueExtendedProperties?.find((p) => p.id.toLowerCase() === BOOKING_UID_PROPERTY.toLowerCase())?.value;
  const uid = own ?? e.iCalUId ?? e.id;
  const transparent = FREE.has(e.showAs ?? 'busy');
  const cancelled = e.isCancelled === true;
  if (e.isAllDay) {
    return { uid, timing: { kind: 'date', start: e.start.dateTime.slice(0, 10), end: e.end.dateTime.slice(0, 10) }, transparent, cancelled };
  }
  if (!isUtc(e.start.timeZone) || !isUtc(e.end.timeZone)) return null;
  const start = utcInstant(e.start);
  const end = utcInstant(e.end);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return null;
  return { uid, timing: { kind: 'instant', start, end }, transparent, cancelled };
}

const graphTime = (d: Date): GraphDateTime => ({ dateTime: d.toISOString().slice(0, 19), timeZone: 'UTC' });

/**
 * The event's fields this service owns (create and update alike). No attendees, as with CalDAV: Graph
 * would send invitations. `showAs: busy` so the Booking blocks the host's time in Outlook too.
 */
/** A video Booking without a link of its own (no conferencing template) gets a Teams meeting. */
export function wantsTeams(event: OutgoingEvent): boolean {
  return event.video && !event.joinUrl;
}

export function eventFields(event: OutgoingEvent): Record<string, unknown> {
  return {
    subject: event.summary,
    body: { contentType: 'text', content: event.description },
    start: graphTime(event.start),
    end: graphTime(event.end),
    showAs: 'busy',
    location: { displayName: event.location ?? '' },
    ...(wantsTeams(event) ? { isOnlineMeeting: true, onlineMeetingProvider: 'teamsForBusiness' } : {}),
  };
}

/**
 * Graph's idempotency key for the create of one Booking version: a retried POST with the same
 * transactionId gives back the event the first one made. Per version, so that after an event was
 * deleted by hand a later version is created again instead of being answered with the deleted one.
 */
export function transactionIdFor(event: OutgoingEvent): string {
  const h = createHash('sha256').update(`${event.uid}#${event.sequence}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Body of the create: our fields, the idempotency key and the Booking UID property. */
export function newEventBody(event: OutgoingEvent): Record<string, unknown> {
  return {
    ...eventFields(event),
    transactionId: transactionIdFor(event),
    singleValueExtendedProperties: [{ id: BOOKING_UID_PROPERTY, value: event.uid }],
  };
}
