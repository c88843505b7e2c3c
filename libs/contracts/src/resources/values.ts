import { z } from 'zod';

/** Allowed values that api-v1.md leaves open, fixed by decisions.md §6, §7 and §9. */
export const BOOKING_STATUSES = ['confirmed', 'cancelled'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

export const BOOKING_SOURCES = ['api', 'booking_page'] as const;
export type BookingSource = (typeof BOOKING_SOURCES)[number];

export const MEETING_TYPES = ['video', 'phone', 'in_person', 'custom'] as const;
export type MeetingType = (typeof MEETING_TYPES)[number];

export const CALENDAR_STATUSES = ['pending', 'synced', 'failed'] as const;
export type CalendarStatus = (typeof CALENDAR_STATUSES)[number];

export const CALENDAR_ERROR_CODES = ['provider_unavailable', 'auth_failed', 'calendar_not_found', 'rejected'] as const;
export type CalendarErrorCode = (typeof CALENDAR_ERROR_CODES)[number];

export const EVENT_TYPE_STATUSES = ['active', 'inactive'] as const;
export type EventTypeStatus = (typeof EVENT_TYPE_STATUSES)[number];

/** In the order of precedence of decisions.md §7: the first that applies is reported. */
export const UNAVAILABLE_REASONS = ['inactive', 'calendar_not_connected', 'calendar_error', 'no_availability'] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

/** Admin-only access mode; not a field of the v1 Event Type. */
export const EVENT_TYPE_ACCESS_MODES = ['public', 'invitation_only'] as const;
export type EventTypeAccess = (typeof EVENT_TYPE_ACCESS_MODES)[number];

export const INVITATION_STATUSES = ['not_yet_valid', 'active', 'expired', 'exhausted', 'revoked'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export const bookingStatusSchema = z.enum(BOOKING_STATUSES).meta({ id: 'BookingStatus', description: 'Booking status.' });
export const bookingSourceSchema = z.enum(BOOKING_SOURCES).meta({ id: 'BookingSource', description: 'Origin of a Booking.' });
export const meetingTypeSchema = z.enum(MEETING_TYPES).meta({ id: 'MeetingType', description: 'Meeting kind.' });
export const calendarStatusSchema = z
  .enum(CALENDAR_STATUSES)
  .meta({ id: 'CalendarStatus', description: 'Calendar sync state: pending until the provider matches the Booking.' });
export const calendarErrorCodeSchema = z
  .enum(CALENDAR_ERROR_CODES)
  .meta({ id: 'CalendarErrorCode', description: 'Why writing the calendar event failed.' });
export const eventTypeStatusSchema = z.enum(EVENT_TYPE_STATUSES).meta({ id: 'EventTypeStatus', description: 'Event Type status.' });
export const unavailableReasonSchema = z
  .enum(UNAVAILABLE_REASONS)
  .meta({ id: 'UnavailableReason', description: 'Why an Event Type is not bookable.' });
export const eventTypeAccessSchema = z
  .enum(EVENT_TYPE_ACCESS_MODES)
  .meta({ id: 'EventTypeAccess', description: 'Who may book through the hosted booking page.' });
export const invitationStatusSchema = z
  .enum(INVITATION_STATUSES)
  .meta({ id: 'BookingInvitationStatus', description: 'Effective status of a Booking Invitation.' });
