import { newId, toTimestamp, type Booking } from '@sched/contracts';

const THIRTY_MINUTES_MS = 30 * 60_000;

/**
 * A Booking as the API returns it (the `Booking` contract), for events, stubs and client tests:
 * a confirmed, version 1 API Booking of 30 minutes with fresh ids. Any field can be overridden;
 * a `start_at` given without an `end_at` keeps the 30 minutes.
 */
export function makeBooking(overrides: Partial<Booking> = {}): Booking {
  const start = new Date(overrides.start_at ?? '2026-11-22T09:30:00.000Z');
  return {
    id: newId('bkg'),
    status: 'confirmed',
    version: 1,
    source: 'api',
    event_type_id: newId('evt'),
    host_id: newId('hst'),
    start_at: toTimestamp(start),
    end_at: toTimestamp(new Date(start.getTime() + THIRTY_MINUTES_MS)),
    guest: { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London' },
    meeting: { type: 'video', join_url: null },
    calendar: { status: 'pending', error_code: null },
    metadata: {},
    created_at: '2026-11-01T08:00:00.000Z',
    rescheduled_at: null,
    cancelled_at: null,
    ...overrides,
  };
}
