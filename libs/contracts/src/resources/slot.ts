import { z } from 'zod';
import { localTimestampSchema, timestampSchema, timezoneSchema } from '../time';

export const slotSchema = z
  .strictObject({
    start_at: timestampSchema,
    end_at: timestampSchema,
    local_start_at: localTimestampSchema,
    local_end_at: localTimestampSchema,
    timezone: timezoneSchema,
  })
  .meta({ id: 'Slot', description: 'A bookable start; not held until a Booking is created.' });

export type Slot = z.infer<typeof slotSchema>;
