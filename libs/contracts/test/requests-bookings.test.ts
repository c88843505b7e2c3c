import {
  cancelBookingBodySchema,
  createBookingBodySchema,
  listBookingsQuerySchema,
  rescheduleBookingBodySchema,
} from '../src';
import { details, ok } from './helpers';

const validCreate = () => ({
  event_type_id: 'evt_0123456789abcdefghijkl',
  start_at: '2026-11-22T09:30:00Z',
  guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
});

describe('POST /v1/bookings body', () => {
  it('accepts a valid body and turns start_at into a Date', () => {
    const r = createBookingBodySchema.parse({ ...validCreate(), metadata: { order: 'A-17' } });
    expect(r.start_at).toEqual(new Date('2026-11-22T09:30:00.000Z'));
    expect(r.metadata).toEqual({ order: 'A-17' });
  });

  it('allows guest.name of 1 and 120 characters; 121 is too_long, empty is too_short', () => {
    ok(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, name: 'x'.repeat(120) } });
    ok(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, name: 'x' } });
    expect(details(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, name: 'x'.repeat(121) } })).toEqual([
      { field: 'guest.name', issue: 'too_long' },
    ]);
    expect(details(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, name: '' } })).toEqual([
      { field: 'guest.name', issue: 'too_short' },
    ]);
  });

  it('allows event_type_id of 40 characters; 41 is too_long', () => {
    ok(createBookingBodySchema, { ...validCreate(), event_type_id: 'e'.repeat(40) });
    expect(details(createBookingBodySchema, { ...validCreate(), event_type_id: 'e'.repeat(41) })).toEqual([
      { field: 'event_type_id', issue: 'too_long' },
    ]);
  });

  it('checks guest.email length and shape, and guest.timezone', () => {
    const email254 = `${'a'.repeat(242)}@example.com`;
    ok(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, email: email254 } });
    expect(details(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, email: `a${email254}` } })).toEqual([
      { field: 'guest.email', issue: 'too_long' },
    ]);
    expect(details(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, email: 'ada at example.com' } })).toEqual([
      { field: 'guest.email', issue: 'invalid_format' },
    ]);
    expect(details(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, timezone: 'Mars/Olympus' } })).toEqual([
      { field: 'guest.timezone', issue: 'invalid_value' },
    ]);
  });

  it('refuses start_at with another offset or an impossible date', () => {
    expect(details(createBookingBodySchema, { ...validCreate(), start_at: '2026-11-22T10:30:00+01:00' })).toEqual([
      { field: 'start_at', issue: 'invalid_format' },
    ]);
    expect(details(createBookingBodySchema, { ...validCreate(), start_at: '2026-02-30T10:00:00Z' })).toEqual([
      { field: 'start_at', issue: 'invalid_format' },
    ]);
  });

  it('refuses unknown fields, at the top and inside guest, with unknown_field', () => {
    expect(details(createBookingBodySchema, { ...validCreate(), host_id: 'hst_x' })).toEqual([{ field: 'host_id', issue: 'unknown_field' }]);
    expect(details(createBookingBodySchema, { ...validCreate(), guest: { ...validCreate().guest, phone: '1' } })).toEqual([
      { field: 'guest.phone', issue: 'unknown_field' },
    ]);
  });

  it('reports missing fields as required', () => {
    expect(details(createBookingBodySchema, {})).toEqual([
      { field: 'event_type_id', issue: 'required' },
      { field: 'start_at', issue: 'required' },
      { field: 'guest', issue: 'required' },
    ]);
  });

  it('applies the metadata bounds', () => {
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expect(details(createBookingBodySchema, { ...validCreate(), metadata: tooMany })).toEqual([{ field: 'metadata', issue: 'too_many_keys' }]);
  });
});

describe('reschedule and cancel bodies', () => {
  it('reschedule needs start_at and expected_version >= 1', () => {
    ok(rescheduleBookingBodySchema, { start_at: '2026-11-22T09:30:00Z', expected_version: 1 });
    expect(details(rescheduleBookingBodySchema, { start_at: '2026-11-22T09:30:00Z', expected_version: 0 })).toEqual([
      { field: 'expected_version', issue: 'out_of_range' },
    ]);
    expect(details(rescheduleBookingBodySchema, { start_at: '2026-11-22T09:30:00Z', expected_version: 1.5 })).toEqual([
      { field: 'expected_version', issue: 'invalid_type' },
    ]);
    expect(details(rescheduleBookingBodySchema, { start_at: '2026-11-22T09:30:00Z', expected_version: '1' })).toEqual([
      { field: 'expected_version', issue: 'invalid_type' },
    ]);
    expect(details(rescheduleBookingBodySchema, {})).toEqual([
      { field: 'start_at', issue: 'required' },
      { field: 'expected_version', issue: 'required' },
    ]);
  });

  it('cancel takes an empty body or expected_version >= 1', () => {
    ok(cancelBookingBodySchema, {});
    ok(cancelBookingBodySchema, { expected_version: 1 });
    expect(details(cancelBookingBodySchema, { expected_version: 0 })).toEqual([{ field: 'expected_version', issue: 'out_of_range' }]);
    expect(details(cancelBookingBodySchema, { reason: 'x' })).toEqual([{ field: 'reason', issue: 'unknown_field' }]);
  });
});

describe('GET /v1/bookings query', () => {
  const from = '2026-01-01T00:00:00Z';
  const plus = (ms: number) => new Date(Date.parse(from) + ms).toISOString();
  const DAY = 86_400_000;

  it('accepts no parameters at all', () => ok(listBookingsQuerySchema, {}));

  it('allows a window of exactly 90 days and refuses 90 days + 1 ms on starts_to', () => {
    ok(listBookingsQuerySchema, { starts_from: from, starts_to: plus(90 * DAY) });
    expect(details(listBookingsQuerySchema, { starts_from: from, starts_to: plus(90 * DAY + 1) })).toEqual([
      { field: 'starts_to', issue: 'out_of_range' },
    ]);
  });

  it('needs starts_to after starts_from', () => {
    ok(listBookingsQuerySchema, { starts_from: from, starts_to: plus(1) });
    expect(details(listBookingsQuerySchema, { starts_from: from, starts_to: from })).toEqual([{ field: 'starts_to', issue: 'out_of_range' }]);
    expect(details(listBookingsQuerySchema, { starts_from: from, starts_to: plus(-1) })).toEqual([{ field: 'starts_to', issue: 'out_of_range' }]);
  });

  it('needs starts_from and starts_to together', () => {
    expect(details(listBookingsQuerySchema, { starts_from: from })).toEqual([{ field: 'starts_to', issue: 'required' }]);
    expect(details(listBookingsQuerySchema, { starts_to: from })).toEqual([{ field: 'starts_from', issue: 'required' }]);
  });

  it('reports a malformed bound as invalid_format, not as missing', () => {
    expect(details(listBookingsQuerySchema, { starts_from: '2026-01-01T00:00:00+01:00', starts_to: from })).toEqual([
      { field: 'starts_from', issue: 'invalid_format' },
    ]);
  });

  it('checks limit as a canonical integer 1 to 100', () => {
    expect(listBookingsQuerySchema.parse({ limit: '1' }).limit).toBe(1);
    expect(listBookingsQuerySchema.parse({ limit: '100' }).limit).toBe(100);
    for (const bad of ['0', '101', '99999999999999999999999']) {
      expect(details(listBookingsQuerySchema, { limit: bad })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    }
    for (const bad of ['1.5', '', 'abc', '01', '+1', '-1', ' 1', '1e2', '0x10']) {
      expect(details(listBookingsQuerySchema, { limit: bad })).toEqual([{ field: 'limit', issue: 'invalid_format' }]);
    }
    expect(details(listBookingsQuerySchema, { limit: ['1', '2'] })).toEqual([{ field: 'limit', issue: 'invalid_type' }]);
  });

  it('allows a cursor of 2048 characters; 2049 is too_long', () => {
    ok(listBookingsQuerySchema, { cursor: 'c'.repeat(2048) });
    expect(details(listBookingsQuerySchema, { cursor: 'c'.repeat(2049) })).toEqual([{ field: 'cursor', issue: 'too_long' }]);
  });

  it('checks status and event_type_id, and refuses unknown parameters', () => {
    ok(listBookingsQuerySchema, { status: 'cancelled', event_type_id: 'e'.repeat(40) });
    expect(details(listBookingsQuerySchema, { status: 'pending' })).toEqual([{ field: 'status', issue: 'invalid_value' }]);
    expect(details(listBookingsQuerySchema, { event_type_id: 'e'.repeat(41) })).toEqual([{ field: 'event_type_id', issue: 'too_long' }]);
    expect(details(listBookingsQuerySchema, { sort: 'asc' })).toEqual([{ field: 'sort', issue: 'unknown_field' }]);
  });
});
