import { z } from 'zod';
import { idSchema } from '../ids';
import { timestampSchema } from '../time';
import { eventTypeStatusSchema, meetingTypeSchema, unavailableReasonSchema } from './values';

/** Event Type as the API returns it (api-v1.md), nothing more. */
export const eventTypeSchema = z
  .strictObject({
    id: idSchema('evt'),
    host_id: idSchema('hst'),
    name: z.string(),
    description: z.string().nullable(),
    slug: z.string(),
    duration_minutes: z.number().int(),
    slot_interval_minutes: z.number().int(),
    buffer_before_minutes: z.number().int(),
    buffer_after_minutes: z.number().int(),
    minimum_notice_minutes: z.number().int(),
    maximum_advance_minutes: z.number().int(),
    meeting_type: meetingTypeSchema,
    status: eventTypeStatusSchema,
    bookable: z.boolean(),
    unavailable_reason: unavailableReasonSchema.nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'EventType', description: 'A kind of meeting a host offers.' });

export type EventType = z.infer<typeof eventTypeSchema>;
