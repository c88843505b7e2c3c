import { z } from 'zod';
import { emailSchema } from '../email';
import { idSchema } from '../ids';
import { metadataSchema } from '../metadata';
import { timestampSchema, timezoneSchema } from '../time';
import { bookingSourceSchema, bookingStatusSchema, calendarErrorCodeSchema, calendarStatusSchema, meetingTypeSchema } from './values';

export const bookingGuestSchema = z
  .strictObject({
    name: z.string(),
    email: emailSchema,
    timezone: timezoneSchema,
  })
  .meta({ id: 'BookingGuest', description: 'The person who booked.' });

export const bookingMeetingSchema = z
  .strictObject({
    type: meetingTypeSchema,
    join_url: z.string().nullable(),
  })
  .meta({ id: 'BookingMeeting', description: 'How the meeting takes place; join_url is null until the calendar event is written.' });

export const bookingCalendarSchema = z
  .strictObject({
    status: calendarStatusSchema,
    error_code: calendarErrorCodeSchema.nullable(),
  })
  .meta({ id: 'BookingCalendar', description: 'State of the calendar event of the Booking.' });

/** Booking as the API returns it (api-v1.md), nothing more. */
export const bookingSchema = z
  .strictObject({
    id: idSchema('bkg'),
    status: bookingStatusSchema,
    version: z.number().int().min(1),
    source: bookingSourceSchema,
    event_type_id: idSchema('evt'),
    host_id: idSchema('hst'),
    start_at: timestampSchema,
    end_at: timestampSchema,
    guest: bookingGuestSchema,
    meeting: bookingMeetingSchema,
    calendar: bookingCalendarSchema,
    metadata: metadataSchema,
    created_at: timestampSchema,
    rescheduled_at: timestampSchema.nullable(),
    cancelled_at: timestampSchema.nullable(),
  })
  .meta({ id: 'Booking', description: 'A booked meeting of a guest with a host.' });

export type Booking = z.infer<typeof bookingSchema>;
export type BookingGuest = z.infer<typeof bookingGuestSchema>;
