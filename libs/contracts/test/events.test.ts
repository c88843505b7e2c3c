import {
  EVENT_KINDS,
  EVENT_MESSAGE_SCHEMAS,
  eventEnvelopeSchema,
  eventMessageSchema,
  isId,
  isPublicEventKind,
  makeEvent,
  newId,
  PUBLIC_EVENT_KINDS,
  toWebhookBody,
  webhookBodySchema,
} from '../src';
import { makeBooking } from './fixtures';

describe('event messages', () => {
  const workspaceId = newId('wsp');

  it('the five public kinds of api-v1.md, plus three internal ones', () => {
    expect(PUBLIC_EVENT_KINDS).toEqual(['booking.created', 'booking.rescheduled', 'booking.cancelled', 'calendar.created', 'calendar.failed']);
    expect(EVENT_KINDS).toEqual([...PUBLIC_EVENT_KINDS, 'calendar.synced', 'calendar.sync_failed', 'calendar.connection_updated']);
    expect(isPublicEventKind('calendar.synced')).toBe(false);
    expect(isPublicEventKind('booking.created')).toBe(true);
  });

  it('makeEvent builds a valid message with a wev_ id and schema_version 1', () => {
    const msg = makeEvent('booking.created', { workspaceId, data: { booking: makeBooking() }, occurredAt: new Date('2026-11-22T09:00:00Z') });
    expect(isId('wev', msg.id)).toBe(true);
    expect(msg.schema_version).toBe(1);
    expect(msg.occurred_at).toBe('2026-11-22T09:00:00.000Z');
    expect(eventMessageSchema.parse(msg)).toEqual(msg);
    expect(EVENT_MESSAGE_SCHEMAS['booking.created'].safeParse(msg).success).toBe(true);
  });

  it('every kind has its data shape', () => {
    const b = makeBooking({ calendar: { status: 'failed', error_code: 'auth_failed' } });
    const cases = [
      makeEvent('booking.rescheduled', { workspaceId, data: { booking: makeBooking({ version: 2 }) } }),
      makeEvent('booking.cancelled', { workspaceId, data: { booking: makeBooking({ status: 'cancelled' }) } }),
      makeEvent('calendar.created', { workspaceId, data: { booking: makeBooking({ calendar: { status: 'synced', error_code: null } }) } }),
      makeEvent('calendar.failed', { workspaceId, data: { booking: b, error_code: 'auth_failed' } }),
      makeEvent('calendar.synced', {
        workspaceId,
        data: { booking_id: newId('bkg'), booking_version: 1, status: 'synced', join_url: null, event_uid: 'bkg_x@sched' },
      }),
      makeEvent('calendar.sync_failed', { workspaceId, data: { booking_id: newId('bkg'), booking_version: 3, error_code: 'rejected' } }),
    ];
    for (const msg of cases) expect(eventMessageSchema.safeParse(msg).success).toBe(true);
  });

  it('the generic envelope accepts any kind, for routing', () => {
    const msg = makeEvent('calendar.synced', {
      workspaceId,
      data: { booking_id: newId('bkg'), booking_version: 1, status: 'synced', join_url: 'https://meet.example.com/x', event_uid: 'u' },
    });
    expect(eventEnvelopeSchema.safeParse(msg).success).toBe(true);
    expect(eventEnvelopeSchema.safeParse({ ...msg, type: 'invitation.used' }).success).toBe(true);
    expect(eventEnvelopeSchema.safeParse({ ...msg, schema_version: 2 }).success).toBe(false);
  });

  it('refuses data of another kind, extra fields and a wrong schema_version', () => {
    const msg = makeEvent('booking.created', { workspaceId, data: { booking: makeBooking() } });
    expect(eventMessageSchema.safeParse({ ...msg, type: 'calendar.failed' }).success).toBe(false);
    expect(eventMessageSchema.safeParse({ ...msg, type: 'calendar.synced' }).success).toBe(false);
    expect(eventMessageSchema.safeParse({ ...msg, schema_version: 2 }).success).toBe(false);
    expect(eventMessageSchema.safeParse({ ...msg, extra: 1 }).success).toBe(false);
    expect(eventMessageSchema.safeParse({ ...msg, type: 'booking.deleted' }).success).toBe(false);
    expect(eventMessageSchema.safeParse({ ...msg, id: newId('evt') }).success).toBe(false);
  });
});

describe('webhook body', () => {
  it('is {id, type, created_at, workspace_id, data} with the message id and time', () => {
    const msg = makeEvent('booking.cancelled', { workspaceId: newId('wsp'), data: { booking: makeBooking({ status: 'cancelled' }) } });
    const body = toWebhookBody(msg);
    expect(Object.keys(body).sort()).toEqual(['created_at', 'data', 'id', 'type', 'workspace_id']);
    expect(body.id).toBe(msg.id);
    expect(body.created_at).toBe(msg.occurred_at);
    expect(webhookBodySchema.parse(body)).toEqual(body);
  });

  it('never carries the internal fields of a booking message (blocked range, invitation id)', () => {
    const booking = makeBooking({});
    const msg = makeEvent('booking.created', {
      workspaceId: newId('wsp'),
      data: { booking, internal: { blocked_from: booking.start_at, blocked_to: booking.end_at, invitation_id: newId('biv') } },
    });
    expect(eventMessageSchema.parse(msg)).toEqual(msg);
    const body = toWebhookBody(msg);
    expect(body.data).toEqual({ booking });
    expect(webhookBodySchema.safeParse({ ...body, data: msg.data }).success).toBe(false);
  });

  it('exists for public kinds only', () => {
    const msg = makeEvent('calendar.sync_failed', { workspaceId: newId('wsp'), data: { booking_id: newId('bkg'), booking_version: 1, error_code: 'rejected' } });
    const { occurred_at, schema_version: _v, ...rest } = msg;
    expect(webhookBodySchema.safeParse({ ...rest, created_at: occurred_at }).success).toBe(false);
  });
});
