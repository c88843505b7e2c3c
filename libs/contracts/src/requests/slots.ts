import { z } from 'zod';
import { addIssue } from '../issues';
import { localDateDiffDays, localDateSchema, timezoneSchema } from '../time';

/** decisions.md §8: at most 62 dates, `to - from <= 61 days`. */
export const SLOTS_MAX_DATES = 62;

/** Query of GET /v1/event-types/{eventType}/slots. */
export const listSlotsQuerySchema = z
  .strictObject({
    from: localDateSchema.meta({ description: 'First local date of the window, YYYY-MM-DD.' }),
    to: localDateSchema.meta({ description: 'Last local date of the window (inclusive), YYYY-MM-DD; at most 61 days after from.' }),
    timezone: timezoneSchema.meta({ description: 'IANA timezone of the dates and of local_start_at / local_end_at.' }),
  })
  .superRefine((q, ctx) => {
    if (typeof q.from !== 'string' || typeof q.to !== 'string') return;
    const days = localDateDiffDays(q.from, q.to);
    if (days === null) return; // a bad date was reported already
    if (days < 0) addIssue(ctx, 'out_of_range', 'to must not be before from.', ['to']);
    else if (days > SLOTS_MAX_DATES - 1) addIssue(ctx, 'out_of_range', `The window may cover at most ${SLOTS_MAX_DATES} dates.`, ['to']);
  })
  .meta({ id: 'ListSlotsQuery', description: 'Query parameters of GET /v1/event-types/{eventType}/slots.' });

export type ListSlotsQuery = z.infer<typeof listSlotsQuerySchema>;
