import {
  localDateDiffDays,
  localDateSchema,
  localTimestampSchema,
  parseTimestamp,
  timestampInputSchema,
  timestampSchema,
  timezoneSchema,
  toLocalTimestamp,
  toTimestamp,
} from '../src';
import { details, ok } from './helpers';

describe('input timestamps', () => {
  it.each([
    ['2026-11-22T09:30:00Z', '2026-11-22T09:30:00.000Z'],
    ['2026-11-22T09:30:00+00:00', '2026-11-22T09:30:00.000Z'],
    ['2026-11-22T09:30:00.5Z', '2026-11-22T09:30:00.500Z'],
    ['2026-11-22T09:30:00.123Z', '2026-11-22T09:30:00.123Z'],
    ['2026-11-22T09:30:00.123456789+00:00', '2026-11-22T09:30:00.123Z'],
    ['2028-02-29T23:59:59Z', '2028-02-29T23:59:59.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-31T23:59:59.999Z'],
  ])('accepts %s as %s', (input, expected) => {
    const r = timestampInputSchema.safeParse(input);
    expect(r.success && toTimestamp(r.data)).toBe(expected);
  });

  it.each([
    '2026-11-22T09:30:00+01:00',
    '2026-11-22T09:30:00-00:00',
    '2026-11-22T09:30:00-05:00',
    '2026-11-22T09:30:00', // no offset
    '2026-11-22 09:30:00Z',
    '2026-11-22t09:30:00z',
    '2026-11-22T09:30Z',
    '2026-11-22T09:30:00.Z',
    '2026-11-22T09:30:00.1234567890Z',
    '2026-11-22',
    '',
    ' 2026-11-22T09:30:00Z',
  ])('refuses the shape %j with invalid_format', (input) => {
    expect(details(timestampInputSchema, input)).toEqual([{ field: '', issue: 'invalid_format' }]);
  });

  it.each([
    '2026-02-30T10:00:00Z', // no such day
    '0000-01-01T00:00:00Z', // year 0: no such year in the Gregorian calendar Postgres stores
    '2026-02-29T10:00:00Z', // 2026 is not a leap year
    '2100-02-29T10:00:00Z', // century rule
    '2026-13-01T10:00:00Z', // month 13
    '2026-00-10T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-11-22T24:00:00Z', // 24:00 is not an instant here
    '2026-11-22T23:60:00Z',
    '2016-12-31T23:59:60Z', // leap second
  ])('refuses the impossible %s with invalid_format', (input) => {
    expect(details(timestampInputSchema, input)).toEqual([{ field: '', issue: 'invalid_format' }]);
    expect(parseTimestamp(input)).toBeNull();
  });

  it('refuses a non-string with invalid_type', () => {
    expect(details(timestampInputSchema, 1700000000000)).toEqual([{ field: '', issue: 'invalid_type' }]);
  });
});

describe('output timestamps', () => {
  it('toTimestamp writes UTC with milliseconds', () => {
    expect(toTimestamp(new Date(Date.UTC(2026, 10, 22, 9, 30)))).toBe('2026-11-22T09:30:00.000Z');
    expect(() => toTimestamp(new Date(NaN))).toThrow(RangeError);
  });

  it('timestampSchema accepts only the output form', () => {
    ok(timestampSchema, '2026-11-22T09:30:00.000Z');
    expect(timestampSchema.safeParse('2026-11-22T09:30:00Z').success).toBe(false);
    expect(timestampSchema.safeParse('2026-11-22T09:30:00.000+00:00').success).toBe(false);
  });
});

describe('local dates', () => {
  it.each(['2026-01-01', '2028-02-29', '2026-12-31'])('accepts %s', (d) => ok(localDateSchema, d));
  it.each(['2026-02-29', '2026-02-30', '0000-01-01', '2026-13-01', '2026-1-01', '20260101', '2026-01-01T00:00:00Z', ''])('refuses %j', (d) => {
    expect(details(localDateSchema, d)).toEqual([{ field: '', issue: 'invalid_format' }]);
  });
  it('counts days across DST and leap days', () => {
    expect(localDateDiffDays('2026-03-01', '2026-05-01')).toBe(61);
    expect(localDateDiffDays('2028-02-28', '2028-03-01')).toBe(2);
    expect(localDateDiffDays('2026-02-30', '2026-03-01')).toBeNull();
  });
});

describe('time zones', () => {
  it.each(['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5'])('accepts %s', (tz) =>
    ok(timezoneSchema, tz),
  );
  it.each(['Mars/Olympus', 'Europe/Pariss', '+01:00', '-05:00', '', 'Not a zone', 'a'.repeat(65)])('refuses %j with invalid_value', (tz) => {
    expect(details(timezoneSchema, tz)).toEqual([{ field: '', issue: 'invalid_value' }]);
  });
  it('refuses a non-string with invalid_type', () => {
    expect(details(timezoneSchema, 1)).toEqual([{ field: '', issue: 'invalid_type' }]);
  });
});

describe('local timestamps of Slots', () => {
  it('writes the local time with its numeric offset, in winter and summer', () => {
    expect(toLocalTimestamp(new Date('2026-11-22T09:30:00.000Z'), 'Europe/Paris')).toBe('2026-11-22T10:30:00.000+01:00');
    expect(toLocalTimestamp(new Date('2026-07-01T09:30:00.000Z'), 'Europe/Paris')).toBe('2026-07-01T11:30:00.000+02:00');
    expect(toLocalTimestamp(new Date('2026-07-01T09:30:00.250Z'), 'America/St_Johns')).toBe('2026-07-01T07:00:00.250-02:30');
    expect(toLocalTimestamp(new Date('2026-07-01T09:30:00.000Z'), 'UTC')).toBe('2026-07-01T09:30:00.000+00:00');
    expect(toLocalTimestamp(new Date('2026-12-31T23:30:00.000Z'), 'Asia/Tokyo')).toBe('2027-01-01T08:30:00.000+09:00');
  });
  it('makes what localTimestampSchema accepts', () => {
    ok(localTimestampSchema, toLocalTimestamp(new Date(), 'Asia/Kathmandu'));
    expect(localTimestampSchema.safeParse('2026-07-01T09:30:00.000Z').success).toBe(false);
  });
  it('refuses an unknown zone', () => {
    expect(() => toLocalTimestamp(new Date(), 'Mars/Olympus')).toThrow(RangeError);
  });
});
