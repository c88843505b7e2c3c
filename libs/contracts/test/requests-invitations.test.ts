import { createBookingInvitationBodySchema, invitationTimeIssues, listBookingInvitationsQuerySchema } from '../src';
import { details, ok } from './helpers';

const valid = () => ({ event_type_id: 'evt_0123456789abcdefghijkl', expires_at: '2027-01-01T00:00:00Z', max_uses: 1 });

describe('POST /v1/booking-invitations body', () => {
  it('accepts the minimal body and the full one', () => {
    ok(createBookingInvitationBodySchema, valid());
    const r = createBookingInvitationBodySchema.parse({
      ...valid(),
      email: 'ada@example.com',
      not_before: '2026-12-01T00:00:00+00:00',
      metadata: { crm: 'x' },
    });
    expect(r.not_before).toEqual(new Date('2026-12-01T00:00:00.000Z'));
    expect(r.expires_at).toEqual(new Date('2027-01-01T00:00:00.000Z'));
  });

  it('allows email and not_before to be null', () => ok(createBookingInvitationBodySchema, { ...valid(), email: null, not_before: null }));

  it('allows max_uses 1 and 100; 0 and 101 are out_of_range', () => {
    ok(createBookingInvitationBodySchema, { ...valid(), max_uses: 100 });
    expect(details(createBookingInvitationBodySchema, { ...valid(), max_uses: 0 })).toEqual([{ field: 'max_uses', issue: 'out_of_range' }]);
    expect(details(createBookingInvitationBodySchema, { ...valid(), max_uses: 101 })).toEqual([{ field: 'max_uses', issue: 'out_of_range' }]);
    expect(details(createBookingInvitationBodySchema, { ...valid(), max_uses: 2.5 })).toEqual([{ field: 'max_uses', issue: 'invalid_type' }]);
  });

  it('checks email length (254) and shape', () => {
    ok(createBookingInvitationBodySchema, { ...valid(), email: `${'a'.repeat(242)}@example.com` });
    expect(details(createBookingInvitationBodySchema, { ...valid(), email: `${'a'.repeat(243)}@example.com` })).toEqual([
      { field: 'email', issue: 'too_long' },
    ]);
    expect(details(createBookingInvitationBodySchema, { ...valid(), email: 'nobody' })).toEqual([{ field: 'email', issue: 'invalid_format' }]);
  });

  it('allows event_type_id of 40 characters; 41 is too_long', () => {
    ok(createBookingInvitationBodySchema, { ...valid(), event_type_id: 'e'.repeat(40) });
    expect(details(createBookingInvitationBodySchema, { ...valid(), event_type_id: 'e'.repeat(41) })).toEqual([
      { field: 'event_type_id', issue: 'too_long' },
    ]);
  });

  it('needs expires_at after not_before', () => {
    ok(createBookingInvitationBodySchema, { ...valid(), not_before: '2026-12-31T23:59:59.999Z' });
    expect(details(createBookingInvitationBodySchema, { ...valid(), not_before: '2027-01-01T00:00:00Z' })).toEqual([
      { field: 'expires_at', issue: 'out_of_range' },
    ]);
  });

  it('refuses impossible or offset timestamps', () => {
    expect(details(createBookingInvitationBodySchema, { ...valid(), expires_at: '2027-02-30T00:00:00Z' })).toEqual([
      { field: 'expires_at', issue: 'invalid_format' },
    ]);
    expect(details(createBookingInvitationBodySchema, { ...valid(), not_before: '2026-12-01T00:00:00+01:00' })).toEqual([
      { field: 'not_before', issue: 'invalid_format' },
    ]);
  });

  it('requires event_type_id, expires_at and max_uses, and refuses unknown fields', () => {
    expect(details(createBookingInvitationBodySchema, {})).toEqual([
      { field: 'event_type_id', issue: 'required' },
      { field: 'expires_at', issue: 'required' },
      { field: 'max_uses', issue: 'required' },
    ]);
    expect(details(createBookingInvitationBodySchema, { ...valid(), used_count: 0 })).toEqual([{ field: 'used_count', issue: 'unknown_field' }]);
  });

  it('invitationTimeIssues wants expires_at in the future', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    expect(invitationTimeIssues({ expires_at: new Date(now.getTime() + 1) }, now)).toEqual([]);
    expect(invitationTimeIssues({ expires_at: now }, now)).toEqual([{ field: 'expires_at', issue: 'out_of_range' }]);
  });
});

describe('GET /v1/booking-invitations query', () => {
  it('checks every parameter at its bounds', () => {
    ok(listBookingInvitationsQuerySchema, {});
    ok(listBookingInvitationsQuerySchema, { status: 'not_yet_valid', event_type_id: 'e'.repeat(40), cursor: 'c'.repeat(2048), limit: '100' });
    expect(details(listBookingInvitationsQuerySchema, { status: 'used' })).toEqual([{ field: 'status', issue: 'invalid_value' }]);
    expect(details(listBookingInvitationsQuerySchema, { event_type_id: 'e'.repeat(41) })).toEqual([{ field: 'event_type_id', issue: 'too_long' }]);
    expect(details(listBookingInvitationsQuerySchema, { cursor: 'c'.repeat(2049) })).toEqual([{ field: 'cursor', issue: 'too_long' }]);
    expect(details(listBookingInvitationsQuerySchema, { cursor: '' })).toEqual([{ field: 'cursor', issue: 'too_short' }]);
    expect(details(listBookingInvitationsQuerySchema, { limit: '0' })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(details(listBookingInvitationsQuerySchema, { limit: '101' })).toEqual([{ field: 'limit', issue: 'out_of_range' }]);
    expect(details(listBookingInvitationsQuerySchema, { limit: '1' })).toEqual([]);
    expect(details(listBookingInvitationsQuerySchema, { limit: 'abc' })).toEqual([{ field: 'limit', issue: 'invalid_format' }]);
    expect(details(listBookingInvitationsQuerySchema, { page: '2' })).toEqual([{ field: 'page', issue: 'unknown_field' }]);
  });

  it.each(['not_yet_valid', 'active', 'expired', 'exhausted', 'revoked'])('accepts status %s', (status) =>
    ok(listBookingInvitationsQuerySchema, { status }),
  );
});
