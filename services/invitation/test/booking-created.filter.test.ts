import { createEnvelope } from '@sched/messaging';
import { concernsAnInvitation } from '../src/events/booking-created.handler';

const created = (data: unknown) => createEnvelope({ type: 'booking.created', workspace_id: 'ws_1', data });

describe('which booking events the invitation consumer opens a transaction for', () => {
  it('takes a booking.created carrying an invitation id', () => {
    expect(concernsAnInvitation(created({ booking: {}, internal: { invitation_id: 'inv_1' } }))).toBe(true);
  });

  it('acknowledges without work a booking.created made without an invitation', () => {
    expect(concernsAnInvitation(created({ booking: {} }))).toBe(false);
    expect(concernsAnInvitation(created({ booking: {}, internal: { invitation_id: null } }))).toBe(false);
    expect(concernsAnInvitation(created({ booking: {}, internal: {} }))).toBe(false);
  });

  it('ignores every other event type', () => {
    const other = createEnvelope({ type: 'booking.cancelled', workspace_id: 'ws_1', data: { booking: {}, internal: { invitation_id: 'inv_1' } } });
    expect(concernsAnInvitation(other)).toBe(false);
  });

  it('lets a body it cannot read through, so the handler parses it and dead-letters it as before', () => {
    expect(concernsAnInvitation(created(null))).toBe(true);
    expect(concernsAnInvitation(created('garbage'))).toBe(true);
  });
});
