import { eventsInWindow } from '../../src/providers/caldav/ical-events';
import { toICalendar } from '../../src/providers/caldav/ical-write';

const cal = (...lines: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//t//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');
const PARIS = [
  'BEGIN:VTIMEZONE',
  'TZID:Europe/Paris',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0200',
  'DTSTART:19700329T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:+0200',
  'TZOFFSETTO:+0100',
  'DTSTART:19701025T030000',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];
const window = { from: new Date('2026-10-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z') };
const instants = (events: ReturnType<typeof eventsInWindow>) =>
  events.map((e) => (e.timing.kind === 'instant' ? `${e.timing.start.toISOString()}/${e.timing.end.toISOString()}` : `${e.timing.kind}:${e.timing.start}/${e.timing.end}`));

describe('eventsInWindow (iCalendar → occurrences)', () => {
  it('expands a weekly rule in its own zone across DST, without EXDATEs, replacing moved occurrences', () => {
    const ics = cal(
      ...PARIS,
      'BEGIN:VEVENT',
      'UID:w',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=Europe/Paris:20261012T090000',
      'DTEND;TZID=Europe/Paris:20261012T093000',
      'RRULE:FREQ=WEEKLY;COUNT=4',
      'EXDATE;TZID=Europe/Paris:20261019T090000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:w',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID;TZID=Europe/Paris:20261026T090000',
      'DTSTART;TZID=Europe/Paris:20261026T140000',
      'DTEND;TZID=Europe/Paris:20261026T150000',
      'END:VEVENT',
    );
    expect(instants(eventsInWindow(ics, window)).sort()).toEqual([
      '2026-10-12T07:00:00.000Z/2026-10-12T07:30:00.000Z', // CEST
      '2026-10-26T13:00:00.000Z/2026-10-26T14:00:00.000Z', // the moved one, CET
      '2026-11-02T08:00:00.000Z/2026-11-02T08:30:00.000Z', // CET: still 09:00 local
    ]);
  });

  it('marks a cancelled occurrence of a series as cancelled (free) and keeps the others busy', () => {
    const ics = cal(
      'BEGIN:VEVENT',
      'UID:s',
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20261102T100000Z',
      'DURATION:PT1H',
      'RRULE:FREQ=DAILY;COUNT=2',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:s',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID:20261103T100000Z',
      'DTSTART:20261103T100000Z',
      'DURATION:PT1H',
      'STATUS:CANCELLED',
      'END:VEVENT',
    );
    const events = eventsInWindow(ics, window);
    expect(events.map((e) => [instants([e])[0], e.cancelled])).toEqual([
      ['2026-11-02T10:00:00.000Z/2026-11-02T11:00:00.000Z', false],
      ['2026-11-03T10:00:00.000Z/2026-11-03T11:00:00.000Z', true],
    ]);
  });

  it('takes instances a server already expanded (RECURRENCE-ID, no master) as they are', () => {
    const ics = cal(
      'BEGIN:VEVENT',
      'UID:x',
      'DTSTAMP:20260101T000000Z',
      'RECURRENCE-ID:20261110T090000Z',
      'DTSTART:20261110T090000Z',
      'DTEND:20261110T100000Z',
      'END:VEVENT',
    );
    expect(instants(eventsInWindow(ics, window))).toEqual(['2026-11-10T09:00:00.000Z/2026-11-10T10:00:00.000Z']);
  });

  it('expands all-day rules as local dates and gives a date without DTEND one day', () => {
    const ics = cal('BEGIN:VEVENT', 'UID:a', 'DTSTAMP:20260101T000000Z', 'DTSTART;VALUE=DATE:20261101', 'RRULE:FREQ=WEEKLY;COUNT=2', 'END:VEVENT');
    expect(instants(eventsInWindow(ics, window))).toEqual(['date:2026-11-01/2026-11-02', 'date:2026-11-08/2026-11-09']);
  });

  it('resolves an IANA TZID without VTIMEZONE, and leaves floating or unknown zones to the host zone', () => {
    const ics = cal(
      'BEGIN:VEVENT',
      'UID:ny',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=America/New_York:20261111T090000',
      'DTEND;TZID=America/New_York:20261111T100000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:fl',
      'DTSTAMP:20260101T000000Z',
      'DTSTART:20261112T090000',
      'DTEND:20261112T100000',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:win',
      'DTSTAMP:20260101T000000Z',
      'DTSTART;TZID=W. Europe Standard Time:20261113T090000',
      'DTEND;TZID=W. Europe Standard Time:20261113T100000',
      'END:VEVENT',
    );
    expect(instants(eventsInWindow(ics, window))).toEqual([
      '2026-11-11T14:00:00.000Z/2026-11-11T15:00:00.000Z',
      'floating:2026-11-12T09:00:00/2026-11-12T10:00:00',
      'floating:2026-11-13T09:00:00/2026-11-13T10:00:00',
    ]);
  });

  it('stops an endless rule at the window and leaves out events outside it', () => {
    const ics = cal('BEGIN:VEVENT', 'UID:e', 'DTSTAMP:20260101T000000Z', 'DTSTART:20200101T080000Z', 'DTEND:20200101T081500Z', 'RRULE:FREQ=DAILY', 'END:VEVENT');
    const events = eventsInWindow(ics, { from: new Date('2026-11-02T00:00:00Z'), to: new Date('2026-11-04T00:00:00Z') });
    expect(instants(events)).toEqual(['2026-11-02T08:00:00.000Z/2026-11-02T08:15:00.000Z', '2026-11-03T08:00:00.000Z/2026-11-03T08:15:00.000Z']);
  });

  it('reads TRANSP:TRANSPARENT, and throws on text that is not iCalendar (the provider skips such objects)', () => {
    const ics = cal('BEGIN:VEVENT', 'UID:t', 'DTSTAMP:20260101T000000Z', 'DTSTART:20261102T100000Z', 'DTEND:20261102T110000Z', 'TRANSP:TRANSPARENT', 'END:VEVENT');
    expect(eventsInWindow(ics, window)[0]).toMatchObject({ uid: 't', transparent: true, cancelled: false });
    expect(() => eventsInWindow('not a calendar', window)).toThrow();
  });

  it('reads back the event it writes (UTC times, UID)', () => {
    const ics = toICalendar(
      {
        uid: 'bkg_AAAAAAAAAAAAAAAAAAAAAA@scheduling-service',
        objectName: 'bkg_AAAAAAAAAAAAAAAAAAAAAA.ics',
        summary: 'Video call with Gina, Jr.; the 2nd',
        description: 'line 1\nline 2',
        start: new Date('2026-11-20T10:00:00Z'),
        end: new Date('2026-11-20T10:30:00Z'),
        sequence: 2,
        joinUrl: 'https://meet.example.com/x',
        location: 'https://meet.example.com/x',
        video: true,
      },
      new Date('2026-11-01T00:00:00Z'),
    );
    expect(ics).toContain('SUMMARY:Video call with Gina\\, Jr.\\; the 2nd');
    const [event] = eventsInWindow(ics, window);
    expect(event).toEqual({
      uid: 'bkg_AAAAAAAAAAAAAAAAAAAAAA@scheduling-service',
      timing: { kind: 'instant', start: new Date('2026-11-20T10:00:00Z'), end: new Date('2026-11-20T10:30:00Z') },
      transparent: false,
      cancelled: false,
    });
  });
});
