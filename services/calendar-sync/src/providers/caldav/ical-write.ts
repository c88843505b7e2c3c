import ICAL from 'ical.js';
import type { OutgoingEvent } from '../../domain/calendar-provider';

const PRODID = '-//Scheduling Service//calendar-sync//EN';

/**
 * The iCalendar object of a Booking's event: UTC times (no VTIMEZONE needed), SEQUENCE = Booking
 * version, opaque so it shows as busy to anyone else reading the calendar. No ATTENDEE: adding one
 * would make some servers send invitations on our behalf (CalDAV scheduling).
 */
export function toICalendar(event: OutgoingEvent, now: Date): string {
  const cal = new ICAL.Component(['vcalendar', [], []]);
  cal.addPropertyWithValue('prodid', PRODID);
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('calscale', 'GREGORIAN');

  const ev = new ICAL.Component('vevent');
  ev.addPropertyWithValue('uid', event.uid);
  ev.addPropertyWithValue('dtstamp', ICAL.Time.fromJSDate(now, true));
  ev.addPropertyWithValue('dtstart', ICAL.Time.fromJSDate(event.start, true));
  ev.addPropertyWithValue('dtend', ICAL.Time.fromJSDate(event.end, true));
  ev.addPropertyWithValue('sequence', event.sequence);
  ev.addPropertyWithValue('summary', event.summary);
  ev.addPropertyWithValue('description', event.description);
  if (event.location) ev.addPropertyWithValue('location', event.location);
  if (event.joinUrl) ev.addPropertyWithValue('url', event.joinUrl);
  ev.addPropertyWithValue('status', 'CONFIRMED');
  ev.addPropertyWithValue('transp', 'OPAQUE');
  cal.addSubcomponent(ev);
  return cal.toString();
}
