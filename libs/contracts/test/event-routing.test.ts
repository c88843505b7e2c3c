import { BOOKING_CREATED_WITH_INVITATION, BOOKING_CREATED_WITHOUT_INVITATION, eventRoutingKey } from '../src';

describe('eventRoutingKey', () => {
  const created = (data: unknown) => ({ type: 'booking.created', data });

  it('qualifies booking.created by whether an invitation is involved', () => {
    expect(eventRoutingKey(created({ booking: {}, internal: { invitation_id: 'biv_1' } }))).toBe('booking.created.invitation');
    expect(eventRoutingKey(created({ booking: {}, internal: { invitation_id: null } }))).toBe('booking.created.no_invitation');
    expect(eventRoutingKey(created({ booking: {}, internal: {} }))).toBe('booking.created.no_invitation');
    expect(eventRoutingKey(created({ booking: {} }))).toBe('booking.created.no_invitation');
    expect(eventRoutingKey(created(null))).toBe('booking.created.no_invitation');
    expect([BOOKING_CREATED_WITH_INVITATION, BOOKING_CREATED_WITHOUT_INVITATION]).toEqual(['booking.created.invitation', 'booking.created.no_invitation']);
  });

  it('routes every other kind by its kind, even with an invitation in its data', () => {
    for (const type of ['booking.rescheduled', 'booking.cancelled', 'calendar.created', 'calendar.synced']) {
      expect(eventRoutingKey({ type, data: { internal: { invitation_id: 'biv_1' } } })).toBe(type);
    }
  });
});
