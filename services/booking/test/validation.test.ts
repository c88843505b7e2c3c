import { createBody, nextStart, startBookingHarness, type ApiResponse, type BookingHarness } from './support/booking-harness';

/**
 * Every rule of the Booking endpoints and the Limits table (api-v1.md, decisions.md §1, §4, §6, §10): one
 * request breaks it and gets `400 invalid_request` naming the field, one sits on the boundary and passes.
 * All through the gateway, as a client would call.
 */
let h: BookingHarness;
let bookingId: string;
beforeAll(async () => {
  h = await startBookingHarness();
  const res = await h.api('POST', '/v1/bookings', { json: createBody() });
  expect(res.status).toBe(201);
  bookingId = res.body.data.id;
});
afterAll(async () => {
  await h.close();
});

function expectInvalid(res: ApiResponse, field: string, issue: string): void {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.details).toContainEqual({ field, issue });
}

const guest = (over: Record<string, unknown>) => ({ name: 'Grace', email: 'grace@example.com', timezone: 'UTC', ...over });
const create = (over: Record<string, unknown>, headers?: Record<string, string>) =>
  h.api('POST', '/v1/bookings', { json: createBody({ start_at: nextStart(), ...over }), headers });
const emailOfLength = (n: number) => `${'a'.repeat(n - '@example.com'.length)}@example.com`;
const metadataOfBytes = (n: number) => ({ k: 'x'.repeat(n - '{"k":""}'.length) });
const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

describe('POST /v1/bookings body', () => {
  it('guest.name: 120 characters pass, 121 and empty do not', async () => {
    expect((await create({ guest: guest({ name: 'n'.repeat(120) }) })).status).toBe(201);
    expectInvalid(await create({ guest: guest({ name: 'n'.repeat(121) }) }), 'guest.name', 'too_long');
    expectInvalid(await create({ guest: guest({ name: '' }) }), 'guest.name', 'too_short');
  });

  it('guest.email: 254 characters pass, 255 do not; malformed addresses are invalid_format', async () => {
    expect((await create({ guest: guest({ email: emailOfLength(254) }) })).status).toBe(201);
    expectInvalid(await create({ guest: guest({ email: emailOfLength(255) }) }), 'guest.email', 'too_long');
    for (const bad of ['no-at-sign.example.com', 'two@@example.com', 'a b@example.com', 'a@localhost', '@example.com']) {
      expectInvalid(await create({ guest: guest({ email: bad }) }), 'guest.email', 'invalid_format');
    }
  });

  it('guest.timezone must be an IANA name; guest is required and strict', async () => {
    expectInvalid(await create({ guest: guest({ timezone: 'Mars/Olympus' }) }), 'guest.timezone', 'invalid_value');
    expectInvalid(await create({ guest: guest({ timezone: '+01:00' }) }), 'guest.timezone', 'invalid_value');
    expectInvalid(await create({ guest: guest({ phone: '1' }) }), 'guest.phone', 'unknown_field');
    expectInvalid(await create({ guest: undefined }), 'guest', 'required');
  });

  it('event_type_id: 40 characters pass, 41 do not, missing is required', async () => {
    expect((await create({ event_type_id: `evt_${'a'.repeat(36)}` })).status).toBe(201);
    expectInvalid(await create({ event_type_id: `evt_${'a'.repeat(37)}` }), 'event_type_id', 'too_long');
    expectInvalid(await create({ event_type_id: undefined }), 'event_type_id', 'required');
  });

  it('start_at: UTC with Z or +00:00 and fractions pass; another offset or an impossible date do not', async () => {
    expect((await create({ start_at: nextStart().replace('.000Z', '+00:00') })).status).toBe(201);
    expect((await create({ start_at: nextStart().replace('.000Z', '.000000Z') })).status).toBe(201);
    expectInvalid(await create({ start_at: '2031-03-01T10:00:00+01:00' }), 'start_at', 'invalid_format');
    expectInvalid(await create({ start_at: '2026-02-30T10:00:00Z' }), 'start_at', 'invalid_format');
    expectInvalid(await create({ start_at: '2031-03-01 10:00:00Z' }), 'start_at', 'invalid_format');
    expectInvalid(await create({ start_at: 1234 }), 'start_at', 'invalid_type');
  });

  it('metadata: 50 keys pass, 51 do not; key names up to 40 characters', async () => {
    expect((await create({ metadata: keys(50) })).status).toBe(201);
    expectInvalid(await create({ metadata: keys(51) }), 'metadata', 'too_many_keys');
    expect((await create({ metadata: { ['k'.repeat(40)]: 1 } })).status).toBe(201);
    expectInvalid(await create({ metadata: { ['k'.repeat(41)]: 1 } }), 'metadata', 'key_too_long');
    expectInvalid(await create({ metadata: { '': 1 } }), 'metadata', 'key_too_short');
  });

  it('metadata: depth 3 passes, depth 4 does not', async () => {
    expect((await create({ metadata: { a: { b: [1, 'two'] } } })).status).toBe(201);
    expectInvalid(await create({ metadata: { a: { b: [[1]] } } }), 'metadata', 'too_deep');
    expectInvalid(await create({ metadata: { a: { b: { c: {} } } } }), 'metadata', 'too_deep');
  });

  it('metadata: 8 KiB serialized passes, one byte more does not; it must be an object', async () => {
    expect(Buffer.byteLength(JSON.stringify(metadataOfBytes(8192)))).toBe(8192);
    expect((await create({ metadata: metadataOfBytes(8192) })).status).toBe(201);
    expectInvalid(await create({ metadata: metadataOfBytes(8193) }), 'metadata', 'too_large');
    expectInvalid(await create({ metadata: ['a'] }), 'metadata', 'invalid_type');
  });

  it('refuses unknown fields, a missing body and unknown query parameters', async () => {
    expectInvalid(await create({ status: 'confirmed' }), 'status', 'unknown_field');
    expectInvalid(await h.api('POST', '/v1/bookings'), 'body', 'required');
    expectInvalid(await h.api('POST', '/v1/bookings?dry_run=1', { json: createBody() }), 'dry_run', 'unknown_field');
  });

  it('nothing above was stored: only the passing requests made Bookings', async () => {
    const { rows } = await h.db.adminPool.query(`SELECT guest_name FROM booking.bookings WHERE length(guest_name) > 120 OR guest_email LIKE '%@@%'`);
    expect(rows).toEqual([]);
  });
});

describe('Idempotency-Key header', () => {
  it('255 printable ASCII characters pass; 256, an empty key and non-printable or non-ASCII characters are 400', async () => {
    expect((await create({}, { 'idempotency-key': 'k'.repeat(254) + '~' })).status).toBe(201);
    expectInvalid(await create({}, { 'idempotency-key': 'k'.repeat(256) }), 'Idempotency-Key', 'too_long');
    expectInvalid(await create({}, { 'idempotency-key': '' }), 'Idempotency-Key', 'too_short');
    expectInvalid(await create({}, { 'idempotency-key': 'a\tb' }), 'Idempotency-Key', 'invalid_format');
    expectInvalid(await create({}, { 'idempotency-key': 'caf\u00e9' }), 'Idempotency-Key', 'invalid_format');
  });
});

describe('reschedule and cancel bodies', () => {
  it('reschedule: expected_version required and at least 1; start_at an RFC 3339 UTC timestamp; strict', async () => {
    const path = `/v1/bookings/${bookingId}/reschedule`;
    expectInvalid(await h.api('POST', path, { json: { start_at: nextStart() } }), 'expected_version', 'required');
    expectInvalid(await h.api('POST', path, { json: { start_at: nextStart(), expected_version: 0 } }), 'expected_version', 'out_of_range');
    expectInvalid(await h.api('POST', path, { json: { start_at: nextStart(), expected_version: 1.5 } }), 'expected_version', 'invalid_type');
    expectInvalid(await h.api('POST', path, { json: { start_at: '2031-03-01T10:00:00-05:00', expected_version: 1 } }), 'start_at', 'invalid_format');
    expectInvalid(await h.api('POST', path, { json: { start_at: '2031-02-30T10:00:00Z', expected_version: 1 } }), 'start_at', 'invalid_format');
    expectInvalid(await h.api('POST', path, { json: { start_at: nextStart(), expected_version: 1, reason: 'x' } }), 'reason', 'unknown_field');
    expectInvalid(await h.api('POST', path), 'body', 'required');
    const ok = await h.api('POST', path, { json: { start_at: nextStart(), expected_version: 1 } });
    expect(ok.status).toBe(200);
  });

  it('cancel: expected_version 0 and unknown fields are 400, expected_version 2 (current) passes', async () => {
    const path = `/v1/bookings/${bookingId}/cancel`;
    expectInvalid(await h.api('POST', path, { json: { expected_version: 0 } }), 'expected_version', 'out_of_range');
    expectInvalid(await h.api('POST', path, { json: { why: 'x' } }), 'why', 'unknown_field');
    expect((await h.api('POST', path, { json: { expected_version: 2 } })).status).toBe(200);
  });
});

describe('GET /v1/bookings query', () => {
  const list = (q: string) => h.api('GET', `/v1/bookings?${q}`);
  const from = '2031-06-01T00:00:00Z';
  const plus = (ms: number) => new Date(Date.parse(from) + ms).toISOString();
  const DAY = 86_400_000;

  it('limit: 1 and 100 pass; 0, 101 and non-canonical numbers do not', async () => {
    expect((await list('limit=1')).status).toBe(200);
    expect((await list('limit=100')).status).toBe(200);
    expectInvalid(await list('limit=0'), 'limit', 'out_of_range');
    expectInvalid(await list('limit=101'), 'limit', 'out_of_range');
    expectInvalid(await list('limit=01'), 'limit', 'invalid_format');
  });

  it('cursor: 2048 characters pass the length rule (then fail the signature), 2049 are too_long', async () => {
    expectInvalid(await list(`cursor=${'a'.repeat(2048)}`), 'cursor', 'invalid_format');
    expectInvalid(await list(`cursor=${'a'.repeat(2049)}`), 'cursor', 'too_long');
  });

  it('window: exactly 90 days passes, 90 days + 1 ms does not', async () => {
    expect((await list(`starts_from=${from}&starts_to=${plus(90 * DAY)}`)).status).toBe(200);
    expectInvalid(await list(`starts_from=${from}&starts_to=${plus(90 * DAY + 1)}`), 'starts_to', 'out_of_range');
  });

  it('starts_from and starts_to come together, and starts_to must be after starts_from', async () => {
    expectInvalid(await list(`starts_from=${from}`), 'starts_to', 'required');
    expectInvalid(await list(`starts_to=${from}`), 'starts_from', 'required');
    expectInvalid(await list(`starts_from=${from}&starts_to=${from}`), 'starts_to', 'out_of_range');
    expectInvalid(await list(`starts_from=${from}&starts_to=${plus(-1)}`), 'starts_to', 'out_of_range');
    expect((await list(`starts_from=${from}&starts_to=${plus(1)}`)).status).toBe(200);
  });

  it('timestamps with another offset or an impossible date are invalid_format', async () => {
    expectInvalid(await list(`starts_from=${encodeURIComponent('2031-06-01T00:00:00+01:00')}&starts_to=${plus(DAY)}`), 'starts_from', 'invalid_format');
    expectInvalid(await list(`starts_from=${from}&starts_to=2031-02-30T00:00:00Z`), 'starts_to', 'invalid_format');
    expect((await list(`starts_from=${encodeURIComponent('2031-06-01T00:00:00+00:00')}&starts_to=${plus(DAY)}`)).status).toBe(200);
  });

  it('event_type_id: 40 characters pass, 41 do not; status is confirmed or cancelled; unknown parameters are refused', async () => {
    expect((await list(`event_type_id=${'e'.repeat(40)}`)).status).toBe(200);
    expectInvalid(await list(`event_type_id=${'e'.repeat(41)}`), 'event_type_id', 'too_long');
    expect((await list('status=cancelled')).status).toBe(200);
    expectInvalid(await list('status=pending'), 'status', 'invalid_value');
    expectInvalid(await list('sort=desc'), 'sort', 'unknown_field');
  });
});
