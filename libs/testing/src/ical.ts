/**
 * Calendar objects as a CalDAV client PUTs them (RFC 5545, CRLF lines): for tests and benchmarks that
 * fill a Radicale calendar (TestRadicale.putObject) with events of their own.
 */

/** iCalendar UTC form: 20261122T093000Z. */
export const icalTime = (d: Date) => `${d.toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
/** iCalendar DATE form: 20261122. */
export const icalDate = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');

export function vcalendar(...vevents: string[]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...vevents, 'END:VCALENDAR', ''].join('\r\n');
}

export function vevent(fields: Record<string, string>): string {
  return ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...Object.entries(fields).map(([k, v]) => `${k}:${v}`), 'END:VEVENT'].join('\r\n');
}
