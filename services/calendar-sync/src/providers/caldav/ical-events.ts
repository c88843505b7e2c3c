import { fromZonedTime } from 'date-fns-tz';
import ICAL from 'ical.js';
import { isValidTimeZone } from '@sched/contracts';
import type { CalendarEvent, EventTiming } from '../../domain/calendar-provider';

type Time = InstanceType<typeof ICAL.Time>;
type Component = InstanceType<typeof ICAL.Component>;

/** Bound on occurrences walked per recurring event, so a minutely rule from years ago cannot hang a read. */
const MAX_OCCURRENCES = 20_000;
/** Local (date or floating) times are within ±14 h of UTC: widen their overlap test by that much. */
const LOCAL_SLACK_MS = 14 * 3_600_000;

export interface Window {
  from: Date;
  to: Date;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const dateString = (t: Time) => `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`;
const localString = (t: Time) => `${dateString(t)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;

/**
 * When an event happens. A zone that the object defines (VTIMEZONE) or UTC gives an instant; a TZID
 * with no definition but a known IANA name is resolved with that name; otherwise the time is
 * floating and the host's zone applies later. VALUE=DATE events are all-day over local dates.
 */
function timingOf(start: Time, end: Time, tzid: string | null): EventTiming {
  if (start.isDate) {
    let endDate = end;
    if (!end.isDate || end.compare(start) <= 0) {
      // No usable end: an all-day event lasts its one day (RFC 5545 3.6.1).
      endDate = start.clone();
      endDate.adjust(1, 0, 0, 0);
    }
    return { kind: 'date', start: dateString(start), end: dateString(endDate) };
  }
  if (start.zone && start.zone.tzid !== 'floating') return { kind: 'instant', start: start.toJSDate(), end: end.toJSDate() };
  if (tzid && isValidTimeZone(tzid)) {
    return { kind: 'instant', start: fromZonedTime(localString(start), tzid), end: fromZonedTime(localString(end), tzid) };
  }
  return { kind: 'floating', start: localString(start), end: localString(end) };
}

function overlaps(t: EventTiming, w: Window): boolean {
  if (t.kind === 'instant') return t.start.getTime() < w.to.getTime() && t.end.getTime() > w.from.getTime();
  const start = Date.parse(`${t.kind === 'date' ? `${t.start}T00:00:00` : t.start}Z`) - LOCAL_SLACK_MS;
  const end = Date.parse(`${t.kind === 'date' ? `${t.end}T00:00:00` : t.end}Z`) + LOCAL_SLACK_MS;
  return start < w.to.getTime() && end > w.from.getTime();
}

/** Where an occurrence starts, roughly (local times read as UTC): enough to stop walking a rule. */
function roughStartMs(t: Time): number {
  return t.zone && t.zone.tzid !== 'floating' && !t.isDate ? t.toJSDate().getTime() : Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

function recurrenceKey(t: Time): string {
  return t.isDate ? `D${dateString(t)}` : `T${roughStartMs(t)}`;
}

function flags(comp: Component): { transparent: boolean; cancelled: boolean } {
  const transp = String(comp.getFirstPropertyValue('transp') ?? '').toUpperCase();
  const status = String(comp.getFirstPropertyValue('status') ?? '').toUpperCase();
  return { transparent: transp === 'TRANSPARENT', cancelled: status === 'CANCELLED' };
}

function tzidOf(comp: Component): string | null {
  const tzid = comp.getFirstProperty('dtstart')?.getParameter('tzid');
  return typeof tzid === 'string' ? tzid : null;
}

/** Occurrences of one recurring master within the window, leaving out those an exception replaces. */
function expand(master: Component, replaced: ReadonlySet<string>, window: Window): CalendarEvent[] {
  const event = new ICAL.Event(master);
  const tzid = tzidOf(master);
  const base = { uid: event.uid, ...flags(master) };
  const out: CalendarEvent[] = [];
  const it = event.iterator();
  const stopAt = window.to.getTime() + LOCAL_SLACK_MS;
  for (let n = 0; n < MAX_OCCURRENCES; n++) {
    const next = it.next();
    if (!next || roughStartMs(next) >= stopAt) break;
    if (replaced.has(recurrenceKey(next))) continue;
    const details = event.getOccurrenceDetails(next);
    const timing = timingOf(details.startDate, details.endDate, tzid);
    if (overlaps(timing, window)) out.push({ ...base, timing });
  }
  return out;
}

/**
 * The events of one iCalendar object that overlap the window. Recurring events are expanded here
 * whether or not the server expanded them (Radicale 3.1 returns masters even when asked to expand):
 * RRULE/RDATE/EXDATE through ical.js, RECURRENCE-ID exceptions taken as they are.
 */
export function eventsInWindow(ics: string, window: Window): CalendarEvent[] {
  const root = new ICAL.Component(ICAL.parse(ics) as unknown[]);
  const vevents = root.name === 'vevent' ? [root] : root.getAllSubcomponents('vevent');
  const exceptions = vevents.filter((v) => v.hasProperty('recurrence-id'));
  const out: CalendarEvent[] = [];

  for (const comp of vevents) {
    if (!comp.hasProperty('dtstart')) continue; // not a usable event
    const event = new ICAL.Event(comp);
    if (!comp.hasProperty('recurrence-id') && event.isRecurring()) {
      const replaced = new Set(exceptions.filter((x) => x.getFirstPropertyValue('uid') === event.uid).map((x) => recurrenceKey(new ICAL.Event(x).recurrenceId)));
      out.push(...expand(comp, replaced, window));
      continue;
    }
    const timing = timingOf(event.startDate, event.endDate, tzidOf(comp));
    if (overlaps(timing, window)) out.push({ uid: event.uid, timing, ...flags(comp) });
  }
  return out;
}
