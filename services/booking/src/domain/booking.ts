import {
  toTimestamp,
  type Booking,
  type BookingSource,
  type BookingStatus,
  type CalendarErrorCode,
  type CalendarStatus,
  type MeetingType,
} from '@sched/contracts';

/** A Booking as this service keeps it: the API fields plus the blocked range and calendar bookkeeping. */
export interface BookingRecord {
  id: string;
  workspaceId: string;
  status: BookingStatus;
  version: number;
  source: BookingSource;
  /** The Booking Invitation whose credential made it (hosted booking page); not part of the v1 Booking. */
  invitationId: string | null;
  eventTypeId: string;
  hostId: string;
  startAt: Date;
  endAt: Date;
  /** start − buffer_before, end + buffer_after: the range the no-overlap constraint holds for the host. */
  blockedFrom: Date;
  blockedTo: Date;
  guest: { name: string; email: string; timezone: string };
  meetingType: MeetingType;
  joinUrl: string | null;
  calendarStatus: CalendarStatus;
  calendarErrorCode: CalendarErrorCode | null;
  /** First time a calendar result reported the event written; null until then. */
  calendarWrittenAt: Date | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  rescheduledAt: Date | null;
  cancelledAt: Date | null;
}

/** The Booking exactly as api-v1.md shows it (bookingSchema), in its field order. */
export function toBookingResource(b: BookingRecord): Booking {
  return {
    id: b.id,
    status: b.status,
    version: b.version,
    source: b.source,
    event_type_id: b.eventTypeId,
    host_id: b.hostId,
    start_at: toTimestamp(b.startAt),
    end_at: toTimestamp(b.endAt),
    guest: { name: b.guest.name, email: b.guest.email, timezone: b.guest.timezone },
    meeting: { type: b.meetingType, join_url: b.joinUrl },
    calendar: { status: b.calendarStatus, error_code: b.calendarErrorCode },
    metadata: b.metadata,
    created_at: toTimestamp(b.createdAt),
    rescheduled_at: b.rescheduledAt ? toTimestamp(b.rescheduledAt) : null,
    cancelled_at: b.cancelledAt ? toTimestamp(b.cancelledAt) : null,
  };
}
