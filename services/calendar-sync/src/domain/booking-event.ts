import { fillConferencingUrl, type Booking } from '@sched/contracts';
import type { OutgoingEvent } from './calendar-provider';

/**
 * The calendar event of a Booking. Its UID and object name come from the Booking id alone, so a
 * redelivered or retried write always lands on the same object and never makes a second event.
 */
const UID_DOMAIN = 'scheduling-service';
const OWN_UID = new RegExp(`^(bkg_[A-Za-z0-9_-]{16,36})@${UID_DOMAIN}$`);

export function bookingEventUid(bookingId: string): string {
  return `${bookingId}@${UID_DOMAIN}`;
}

/** The Booking id of one of this service's events, or null for any other event. */
export function bookingIdFromUid(uid: string): string | null {
  return OWN_UID.exec(uid)?.[1] ?? null;
}

export function bookingObjectName(bookingId: string): string {
  return `${bookingId}.ics`;
}

/**
 * decisions.md §6: a video meeting's join URL comes from the host's conferencing template when the
 * event is first written. Once the Booking carries one it is kept, so a reschedule does not change
 * the link the guest already has even if the template changed meanwhile.
 */
export function joinUrlFor(booking: Booking, template: string | null): string | null {
  if (booking.meeting.type !== 'video') return null;
  if (booking.meeting.join_url) return booking.meeting.join_url;
  return template ? fillConferencingUrl(template, booking.id) : null;
}

const MEETING_LABEL: Record<Booking['meeting']['type'], string> = {
  video: 'Video call',
  phone: 'Phone call',
  in_person: 'In person',
  custom: 'Meeting',
};

export function bookingEvent(booking: Booking, joinUrl: string | null): OutgoingEvent {
  const lines = [
    `Booked by ${booking.guest.name} <${booking.guest.email}> (time zone ${booking.guest.timezone}).`,
    `Meeting: ${MEETING_LABEL[booking.meeting.type]}.`,
    ...(joinUrl ? [`Join: ${joinUrl}`] : []),
    `Booking: ${booking.id}`,
  ];
  return {
    uid: bookingEventUid(booking.id),
    objectName: bookingObjectName(booking.id),
    summary: `${MEETING_LABEL[booking.meeting.type]} with ${booking.guest.name}`,
    description: lines.join('\n'),
    start: new Date(booking.start_at),
    end: new Date(booking.end_at),
    sequence: booking.version,
    joinUrl,
    location: joinUrl,
    video: booking.meeting.type === 'video',
  };
}
