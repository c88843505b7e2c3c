import { DomainError } from '@sched/contracts';
import { dataAnswer, DEFAULT_RETENTION_MS, defaultStorableError } from '@sched/idempotency';
import { toBookingResource } from '../src/domain/booking';
import { newBookingRecord } from '../src/domain/create-booking';
import type { CreateWrite } from '../src/domain/ports';
import { createBatchRow } from '../src/store/create-batch.queries';

/**
 * The row booking.create_bookings reads for one create (migration 0006), field by field: what it stores for
 * the Booking, its event and the answers under the key. Pure: the SQL side is in group-commit.test.ts.
 */
const NOW = new Date('2031-01-01T12:00:00.123Z');
const booking = newBookingRecord(
  'wsp_AAAAAAAAAAAAAAAAAAAAAA',
  { source: 'booking_page', invitationId: 'biv_AAAAAAAAAAAAAAAAAAAAAA', eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA', startAt: new Date('2031-02-01T09:00:00.000Z'), guest: { name: 'Ada', email: 'ada@example.com', timezone: 'UTC' }, metadata: { z: 1, a: [2] } },
  {
    bookable: true,
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: '2031-02-01T09:00:00.000Z',
    end_at: '2031-02-01T09:30:00.000Z',
    blocked_from: '2031-02-01T08:50:00.000Z',
    blocked_to: '2031-02-01T09:40:00.000Z',
    meeting_type: 'video',
  },
  NOW,
);
const KEY = { id: 'key-row', lockKey: '-42', fingerprint: 'fp' };
const insert = (keyed = true): CreateWrite => ({
  kind: 'insert',
  workspaceId: booking.workspaceId,
  key: keyed ? KEY : undefined,
  requestId: 'req_1',
  booking,
  announcement: { type: 'booking.created', booking, occurredAt: NOW },
});

it('an insert under a key: every column of the Booking, its booking.created, the 201 and the 409 it may store', () => {
  const row = createBatchRow(insert());
  const { event, ...rest } = row;
  expect(rest).toEqual({
    kind: 'insert',
    workspace_id: booking.workspaceId,
    key_id: 'key-row',
    lock_key: '-42',
    fingerprint: 'fp',
    retention_s: DEFAULT_RETENTION_MS / 1000,
    id: booking.id,
    source: 'booking_page',
    invitation_id: 'biv_AAAAAAAAAAAAAAAAAAAAAA',
    event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    start_at: '2031-02-01T09:00:00.000Z',
    end_at: '2031-02-01T09:30:00.000Z',
    blocked_from: '2031-02-01T08:50:00.000Z',
    blocked_to: '2031-02-01T09:40:00.000Z',
    guest_name: 'Ada',
    guest_email: 'ada@example.com',
    guest_timezone: 'UTC',
    meeting_type: 'video',
    metadata: '{"z":1,"a":[2]}',
    created_at: '2031-01-01T12:00:00.123Z',
    event_id: expect.stringMatching(/^wev_/),
    // The bytes the route sends and a replay sends again: the envelope of the Booking as the API shows it.
    created_body: JSON.stringify(dataAnswer(201, toBookingResource(booking), 'req_1').body),
    conflict_body: JSON.stringify(defaultStorableError(new DomainError('slot_unavailable'), 'req_1')!.body),
  });
  expect(JSON.parse(event!)).toEqual({
    id: row.event_id,
    type: 'booking.created',
    occurred_at: '2031-01-01T12:00:00.123Z',
    workspace_id: booking.workspaceId,
    schema_version: 1,
    data: { booking: toBookingResource(booking), internal: { blocked_from: '2031-02-01T08:50:00.000Z', blocked_to: '2031-02-01T09:40:00.000Z', invitation_id: 'biv_AAAAAAAAAAAAAAAAAAAAAA' } },
  });
});

it('without a key: no key fields and no stored answers (the SQL reads them as null)', () => {
  const row = createBatchRow(insert(false));
  expect(row).toMatchObject({ key_id: null, lock_key: null, fingerprint: null });
  expect(JSON.parse(JSON.stringify(row))).not.toHaveProperty('created_body');
  expect(JSON.parse(JSON.stringify(row))).not.toHaveProperty('conflict_body');
});

it('a refusal stores its answer; a failure stores nothing but the key; neither without a key', () => {
  const refusal = new DomainError('event_type_not_bookable');
  expect(createBatchRow({ kind: 'refuse', workspaceId: 'wsp_x', key: KEY, requestId: 'req_2', refusal })).toEqual({
    kind: 'refuse',
    workspace_id: 'wsp_x',
    key_id: 'key-row',
    lock_key: '-42',
    fingerprint: 'fp',
    retention_s: DEFAULT_RETENTION_MS / 1000,
    refusal_status: 409,
    refusal_body: JSON.stringify(defaultStorableError(refusal, 'req_2')!.body),
  });
  expect(createBatchRow({ kind: 'fail', workspaceId: 'wsp_x', key: KEY, requestId: 'req_3', failure: new Error('down') })).toEqual({
    kind: 'fail',
    workspace_id: 'wsp_x',
    key_id: 'key-row',
    lock_key: '-42',
    fingerprint: 'fp',
    retention_s: DEFAULT_RETENTION_MS / 1000,
  });
  expect(() => createBatchRow({ kind: 'fail', workspaceId: 'wsp_x', key: undefined, requestId: 'req_3', failure: new Error('down') })).toThrow(/nothing to write/);
});

it('the stored answers are the envelopes’ bytes for any Booking and request id (the row writes the Booking’s JSON into them)', () => {
  const odd = newBookingRecord(
    'wsp_AAAAAAAAAAAAAAAAAAAAAA',
    { source: 'api', invitationId: null, eventTypeId: 'evt_AAAAAAAAAAAAAAAAAAAAAA', startAt: new Date('2031-02-01T09:00:00.000Z'), guest: { name: 'Zoë "Q" \\ O’Neil', email: 'z@example.com', timezone: 'UTC' }, metadata: { '"k"': '\u2028\n', nested: { a: [null, true, 1.5] } } },
    { bookable: true, event_type_id: 'evt_AAAAAAAAAAAAAAAAAAAAAA', host_id: 'hst_AAAAAAAAAAAAAAAAAAAAAA', start_at: '2031-02-01T09:00:00.000Z', end_at: '2031-02-01T09:30:00.000Z', blocked_from: '2031-02-01T09:00:00.000Z', blocked_to: '2031-02-01T09:30:00.000Z', meeting_type: 'phone' },
    NOW,
  );
  const requestId = 'req_a.b:c-d_e';
  const row = createBatchRow({ kind: 'insert', workspaceId: odd.workspaceId, key: KEY, requestId, booking: odd, announcement: { type: 'booking.created', booking: odd, occurredAt: NOW } });
  expect(row.created_body).toBe(JSON.stringify(dataAnswer(201, toBookingResource(odd), requestId).body));
  expect(row.conflict_body).toBe(JSON.stringify(defaultStorableError(new DomainError('slot_unavailable'), requestId)!.body));
  expect(JSON.parse(row.event!).data.booking).toEqual(toBookingResource(odd));
});
