import { parseTimestamp, type EventData } from '@sched/contracts';
import { MINUTE_MS } from './local-time';

/** One Booking in the booked-interval projection, at one version. */
export interface BookedInterval {
  bookingId: string;
  workspaceId: string;
  hostId: string;
  eventTypeId: string;
  version: number;
  status: 'confirmed' | 'cancelled';
  startAt: Date;
  endAt: Date;
  blockedFrom: Date;
  blockedTo: Date;
}

export interface Buffers {
  beforeMinutes: number;
  afterMinutes: number;
}

function instant(value: string): Date {
  const d = parseTimestamp(value);
  if (!d) throw new RangeError('booking event carries an invalid timestamp');
  return d;
}

/**
 * The projection row a booking.* event describes. The blocked range is the one the booking service
 * enforced (data.internal); an event without it (an older publisher) falls back to the Event Type's
 * current buffers, or none when the Event Type is unknown here.
 */
export function bookedIntervalFromEvent(
  workspaceId: string,
  data: EventData<'booking.created'>,
  fallbackBuffers: Buffers | null,
): BookedInterval {
  const b = data.booking;
  const startAt = instant(b.start_at);
  const endAt = instant(b.end_at);
  const before = (fallbackBuffers?.beforeMinutes ?? 0) * MINUTE_MS;
  const after = (fallbackBuffers?.afterMinutes ?? 0) * MINUTE_MS;
  return {
    bookingId: b.id,
    workspaceId,
    hostId: b.host_id,
    eventTypeId: b.event_type_id,
    version: b.version,
    status: b.status,
    startAt,
    endAt,
    blockedFrom: data.internal ? instant(data.internal.blocked_from) : new Date(startAt.getTime() - before),
    blockedTo: data.internal ? instant(data.internal.blocked_to) : new Date(endAt.getTime() + after),
  };
}
