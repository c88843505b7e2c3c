import ICAL from 'ical.js';
import type { OutgoingEvent } from '../../src/domain/calendar-provider';
import { toICalendar } from '../../src/providers/caldav/ical-write';

/** What toICalendar wrote before it wrote text itself: ical.js's component tree, stringified. */
function throughIcalJs(event: OutgoingEvent, now: Date): string {
  const cal = new ICAL.Component(['vcalendar', [], []]);
  cal.addPropertyWithValue('prodid', '-//Scheduling Service//calendar-sync//EN');
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

const base: OutgoingEvent = {
  uid: 'bkg_AAAAAAAAAAAAAAAAAAAAAA@scheduling-service',
  objectName: 'bkg_AAAAAAAAAAAAAAAAAAAAAA.ics',
  summary: 'Video call with Ada Lovelace',
  description: 'Guest: Ada Lovelace <ada@example.com>\nTime zone: Europe/London\nMeeting: video\nJoin: https://meet.example.com/bkg_AAAAAAAAAAAAAAAAAAAAAA\nBooking: bkg_AAAAAAAAAAAAAAAAAAAAAA',
  start: new Date('2026-11-20T10:00:00.000Z'),
  end: new Date('2026-11-20T10:30:00.000Z'),
  sequence: 1,
  joinUrl: 'https://meet.example.com/bkg_AAAAAAAAAAAAAAAAAAAAAA?pwd=a;b,c\\d',
  location: 'https://meet.example.com/bkg_AAAAAAAAAAAAAAAAAAAAAA',
  video: true,
};

/** Deterministic pseudo-random text with the characters that need escaping or several UTF-8 bytes. */
function randomText(seed: number, length: number): string {
  const alphabet = ['a', 'Z', ' ', '0', ';', ',', '\\', '\n', ':', '"', 'é', 'ß', '€', '日', '本', '😀', '👩‍💻', 'ä', '\t', "'"];
  let x = seed;
  let out = '';
  while (out.length < length) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

describe('toICalendar', () => {
  it('writes the bytes ical.js wrote for the same event (escaping, folding at 75 octets, optional properties)', () => {
    const now = new Date('2026-11-01T08:09:10.987Z');
    const cases: OutgoingEvent[] = [
      base,
      { ...base, joinUrl: null, location: null, video: false, summary: 'Phone call with Gina, Jr.; the 2nd', description: 'line 1\nline 2\\n' },
      { ...base, location: 'Room 4, floor 2; building "B"', start: new Date('2027-01-01T00:00:59.999Z'), end: new Date('2027-01-01T23:59:00.001Z'), sequence: 12 },
      { ...base, summary: 'x'.repeat(74), description: 'y'.repeat(75) },
      { ...base, summary: `${'é'.repeat(40)}`, description: `${'€'.repeat(60)}😀${'日本'.repeat(30)}` },
    ];
    for (let i = 0; i < 200; i++) {
      cases.push({
        ...base,
        uid: `bkg_${i}@scheduling-service`,
        summary: randomText(i + 1, (i * 7) % 140),
        description: randomText(i + 1000, (i * 13) % 400),
        location: i % 3 === 0 ? null : randomText(i + 2000, (i * 5) % 90),
        joinUrl: i % 2 === 0 ? null : `https://meet.example.com/${'p'.repeat(i % 120)}`,
        sequence: i,
      });
    }
    for (const event of cases) expect(toICalendar(event, now)).toBe(throughIcalJs(event, now));
  });

  it('is an iCalendar object ical.js reads back as the same event', () => {
    const ics = toICalendar(base, new Date('2026-11-01T00:00:00Z'));
    const vevent = new ICAL.Component(ICAL.parse(ics) as unknown[]).getFirstSubcomponent('vevent')!;
    const ev = new ICAL.Event(vevent);
    expect({ uid: ev.uid, summary: ev.summary, description: ev.description, location: ev.location, sequence: ev.sequence }).toEqual({
      uid: base.uid,
      summary: base.summary,
      description: base.description,
      location: base.location,
      sequence: 1,
    });
    expect(vevent.getFirstPropertyValue('url')).toBe(base.joinUrl);
    expect(ev.startDate.toJSDate().toISOString()).toBe(base.start.toISOString());
    expect(ev.endDate.toJSDate().toISOString()).toBe(base.end.toISOString());
  });
});
