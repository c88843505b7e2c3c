import { newId, toTimestamp, type BookingInvitation, type EventType, type Slot } from '../src';

/** The one Booking fixture of the tree (libs/testing), by path: @sched/testing depends on this package. */
export { makeBooking } from '../../testing/src/booking-fixture';

const t = (iso: string) => toTimestamp(new Date(iso));

export function anEventType(overrides: Partial<EventType> = {}): EventType {
  return {
    id: newId('evt'),
    host_id: newId('hst'),
    name: 'Intro call',
    description: null,
    slug: 'intro-call',
    duration_minutes: 30,
    slot_interval_minutes: 30,
    buffer_before_minutes: 0,
    buffer_after_minutes: 0,
    minimum_notice_minutes: 0,
    maximum_advance_minutes: 86_400,
    meeting_type: 'video',
    status: 'active',
    bookable: true,
    unavailable_reason: null,
    created_at: t('2026-11-01T08:00:00Z'),
    updated_at: t('2026-11-01T08:00:00Z'),
    ...overrides,
  };
}

export function anInvitation(overrides: Partial<BookingInvitation> = {}): BookingInvitation {
  return {
    id: newId('biv'),
    event_type_id: newId('evt'),
    email: null,
    not_before: null,
    expires_at: t('2027-01-01T00:00:00Z'),
    max_uses: 1,
    used_count: 0,
    status: 'active',
    metadata: {},
    created_at: t('2026-11-01T08:00:00Z'),
    updated_at: t('2026-11-01T08:00:00Z'),
    revoked_at: null,
    ...overrides,
  };
}

export function aSlot(): Slot {
  return {
    start_at: t('2026-11-22T09:30:00Z'),
    end_at: t('2026-11-22T10:00:00Z'),
    local_start_at: '2026-11-22T10:30:00.000+01:00',
    local_end_at: '2026-11-22T11:00:00.000+01:00',
    timezone: 'Europe/Paris',
  };
}
