import {
  bookingInvitationListResponseSchema,
  bookingInvitationSchema,
  bookingInvitationWithUrlResponseSchema,
  bookingInvitationWithUrlSchema,
  bookingListResponseSchema,
  bookingResponseSchema,
  bookingSchema,
  dataEnvelope,
  errorEnvelopeSchema,
  eventTypeListResponseSchema,
  eventTypeSchema,
  listEnvelope,
  slotListResponseSchema,
  slotSchema,
} from '../src';
import { makeBooking, anEventType, anInvitation, aSlot } from './fixtures';

describe('Booking resource', () => {
  it('accepts a new Booking and every allowed value of its enums', () => {
    expect(bookingSchema.safeParse(makeBooking()).success).toBe(true);
    const b = makeBooking();
    for (const status of ['confirmed', 'cancelled']) expect(bookingSchema.safeParse({ ...b, status }).success).toBe(true);
    for (const source of ['api', 'booking_page']) expect(bookingSchema.safeParse({ ...b, source }).success).toBe(true);
    for (const type of ['video', 'phone', 'in_person', 'custom']) {
      expect(bookingSchema.safeParse({ ...b, meeting: { type, join_url: 'https://meet.example.com/x' } }).success).toBe(true);
    }
    for (const error_code of ['provider_unavailable', 'auth_failed', 'calendar_not_found', 'rejected']) {
      expect(bookingSchema.safeParse({ ...b, calendar: { status: 'failed', error_code } }).success).toBe(true);
    }
    expect(bookingSchema.safeParse({ ...b, calendar: { status: 'synced', error_code: null } }).success).toBe(true);
  });

  it('has exactly the fields of api-v1.md', () => {
    expect(Object.keys(bookingSchema.shape).sort()).toEqual(
      [
        'id',
        'status',
        'version',
        'source',
        'event_type_id',
        'host_id',
        'start_at',
        'end_at',
        'guest',
        'meeting',
        'calendar',
        'metadata',
        'created_at',
        'rescheduled_at',
        'cancelled_at',
      ].sort(),
    );
    expect(bookingSchema.safeParse({ ...makeBooking(), workspace_id: 'wsp_x' }).success).toBe(false);
    expect(bookingSchema.safeParse({ ...makeBooking(), calendar: { status: 'pending', error_code: null, uid: 'x' } }).success).toBe(false);
  });

  it('refuses unknown enum values, version 0 and non-UTC timestamps', () => {
    expect(bookingSchema.safeParse({ ...makeBooking(), status: 'pending' }).success).toBe(false);
    expect(bookingSchema.safeParse({ ...makeBooking(), calendar: { status: 'done', error_code: null } }).success).toBe(false);
    expect(bookingSchema.safeParse({ ...makeBooking(), version: 0 }).success).toBe(false);
    expect(bookingSchema.safeParse({ ...makeBooking(), start_at: '2026-11-22T09:30:00Z' }).success).toBe(false);
  });
});

describe('Event Type, Slot and Booking Invitation resources', () => {
  it('Event Type: fields of api-v1.md and the values of decisions.md §7', () => {
    expect(eventTypeSchema.safeParse(anEventType()).success).toBe(true);
    for (const unavailable_reason of ['inactive', 'calendar_not_connected', 'calendar_error', 'no_availability']) {
      expect(eventTypeSchema.safeParse(anEventType({ bookable: false, unavailable_reason: unavailable_reason as never })).success).toBe(true);
    }
    expect(eventTypeSchema.safeParse({ ...anEventType(), status: 'archived' }).success).toBe(false);
    expect(eventTypeSchema.safeParse({ ...anEventType(), access: 'public' }).success).toBe(false);
    expect(Object.keys(eventTypeSchema.shape)).toHaveLength(17);
  });

  it('Slot: UTC times and local times with an offset', () => {
    expect(slotSchema.safeParse(aSlot()).success).toBe(true);
    expect(slotSchema.safeParse({ ...aSlot(), local_start_at: '2026-11-22T10:30:00' }).success).toBe(false);
  });

  it('Booking Invitation: invitation_url only in the create/reissue form', () => {
    const inv = anInvitation();
    expect(bookingInvitationSchema.safeParse(inv).success).toBe(true);
    expect(bookingInvitationSchema.safeParse({ ...inv, invitation_url: 'https://book.example.com/i/abc' }).success).toBe(false);
    expect(bookingInvitationWithUrlSchema.safeParse({ ...inv, invitation_url: 'https://book.example.com/i/abc' }).success).toBe(true);
    expect(bookingInvitationWithUrlSchema.safeParse(inv).success).toBe(false);
    for (const status of ['not_yet_valid', 'active', 'expired', 'exhausted', 'revoked']) {
      expect(bookingInvitationSchema.safeParse({ ...inv, status }).success).toBe(true);
    }
  });
});

describe('envelopes', () => {
  const meta = { request_id: 'req_abc' };
  it('one resource: data + meta.request_id', () => {
    expect(bookingResponseSchema.safeParse({ data: makeBooking(), meta }).success).toBe(true);
    expect(dataEnvelope(bookingSchema).safeParse({ data: makeBooking(), meta: { ...meta, next_cursor: null } }).success).toBe(false);
  });

  it('lists: data array + meta.next_cursor string or null', () => {
    expect(bookingListResponseSchema.safeParse({ data: [makeBooking()], meta: { ...meta, next_cursor: null } }).success).toBe(true);
    expect(eventTypeListResponseSchema.safeParse({ data: [anEventType()], meta: { ...meta, next_cursor: 'abc' } }).success).toBe(true);
    expect(listEnvelope(bookingSchema).safeParse({ data: [], meta }).success).toBe(false);
    expect(bookingInvitationListResponseSchema.safeParse({ data: [anInvitation()], meta: { ...meta, next_cursor: null } }).success).toBe(true);
    expect(
      bookingInvitationListResponseSchema.safeParse({
        data: [{ ...anInvitation(), invitation_url: 'https://book.example.com/i/abc' }],
        meta: { ...meta, next_cursor: null },
      }).success,
    ).toBe(false);
  });

  it('slots: data array, meta has request_id only', () => {
    expect(slotListResponseSchema.safeParse({ data: [aSlot()], meta }).success).toBe(true);
    expect(slotListResponseSchema.safeParse({ data: [aSlot()], meta: { ...meta, next_cursor: null } }).success).toBe(false);
  });

  it('create/reissue of an invitation carries the url', () => {
    const data = { ...anInvitation(), invitation_url: 'https://book.example.com/i/abc' };
    expect(bookingInvitationWithUrlResponseSchema.safeParse({ data, meta }).success).toBe(true);
  });

  it('errors: code, message, details array', () => {
    const body = { error: { code: 'invalid_request', message: 'The request is invalid.', details: [{ field: 'guest.name', issue: 'too_long' }] }, meta };
    expect(errorEnvelopeSchema.safeParse(body).success).toBe(true);
    expect(errorEnvelopeSchema.safeParse({ ...body, error: { ...body.error, code: 'teapot' } }).success).toBe(false);
    expect(errorEnvelopeSchema.safeParse({ ...body, error: { ...body.error, stack: 'x' } }).success).toBe(false);
  });
});
