import { z } from 'zod';
import { emailSchema } from '../email';
import { addIssue } from '../issues';
import { metadataSchema } from '../metadata';
import { cursorSchema, limitQuerySchema } from '../pagination';
import { bookingStatusSchema } from '../resources/values';
import { MS_PER_DAY, timestampInputSchema, timezoneSchema } from '../time';
import { expectedVersionSchema, GUEST_NAME_MAX_LENGTH, NAME_MIN_LENGTH, referenceIdSchema } from './fields';

/** decisions.md §6: `starts_to - starts_from <= 90 days`. */
export const BOOKINGS_WINDOW_MAX_MS = 90 * MS_PER_DAY;

/** Query of GET /v1/bookings. Both bounds or neither; starts_to after starts_from, within 90 days. */
export const listBookingsQuerySchema = z
  .strictObject({
    status: bookingStatusSchema.optional(),
    starts_from: timestampInputSchema.optional().meta({ description: 'Inclusive lower bound of start_at; required with starts_to.' }),
    starts_to: timestampInputSchema
      .optional()
      .meta({ description: 'Exclusive upper bound of start_at; required with starts_from; after it and at most 90 days later.' }),
    event_type_id: referenceIdSchema('Only Bookings of this Event Type.').optional(),
    cursor: cursorSchema.optional(),
    limit: limitQuerySchema.optional(),
  })
  .superRefine((q, ctx) => {
    // Runs even when a field failed; such a field still holds its raw string, hence the instanceof.
    if (q.starts_from !== undefined && q.starts_to === undefined) {
      addIssue(ctx, 'required', 'starts_to is required when starts_from is given.', ['starts_to']);
    }
    if (q.starts_to !== undefined && q.starts_from === undefined) {
      addIssue(ctx, 'required', 'starts_from is required when starts_to is given.', ['starts_from']);
    }
    if (q.starts_from instanceof Date && q.starts_to instanceof Date) {
      const span = q.starts_to.getTime() - q.starts_from.getTime();
      if (span <= 0) addIssue(ctx, 'out_of_range', 'starts_to must be after starts_from.', ['starts_to']);
      else if (span > BOOKINGS_WINDOW_MAX_MS) {
        addIssue(ctx, 'out_of_range', 'starts_to must be at most 90 days after starts_from.', ['starts_to']);
      }
    }
  })
  .meta({ id: 'ListBookingsQuery', description: 'Query parameters of GET /v1/bookings.' });

export const guestInputSchema = z
  .strictObject({
    name: z.string().min(NAME_MIN_LENGTH).max(GUEST_NAME_MAX_LENGTH),
    email: emailSchema,
    timezone: timezoneSchema,
  })
  .meta({ id: 'GuestInput', description: 'The guest: name 1 to 120 characters, email, IANA timezone.' });

/** Body of POST /v1/bookings. */
export const createBookingBodySchema = z
  .strictObject({
    event_type_id: referenceIdSchema('The Event Type to book.'),
    start_at: timestampInputSchema.meta({ description: 'Selected Slot start.' }),
    guest: guestInputSchema,
    metadata: metadataSchema.optional(),
  })
  .meta({ id: 'CreateBookingRequest', description: 'Body of POST /v1/bookings.' });

/** Body of POST /v1/bookings/{booking}/reschedule. */
export const rescheduleBookingBodySchema = z
  .strictObject({
    start_at: timestampInputSchema.meta({ description: 'New Slot start.' }),
    expected_version: expectedVersionSchema,
  })
  .meta({ id: 'RescheduleBookingRequest', description: 'Body of POST /v1/bookings/{booking}/reschedule.' });

/** Body of POST /v1/bookings/{booking}/cancel. The body itself is optional: treat none as `{}`. */
export const cancelBookingBodySchema = z
  .strictObject({
    expected_version: expectedVersionSchema.optional(),
  })
  .meta({ id: 'CancelBookingRequest', description: 'Optional body of POST /v1/bookings/{booking}/cancel.' });

export type ListBookingsQuery = z.infer<typeof listBookingsQuerySchema>;
export type CreateBookingBody = z.infer<typeof createBookingBodySchema>;
export type RescheduleBookingBody = z.infer<typeof rescheduleBookingBodySchema>;
export type CancelBookingBody = z.infer<typeof cancelBookingBodySchema>;
