import { z } from 'zod';
import { addIssue } from '../../issues';
import { localDateSchema } from '../../time';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const MAX_INTERVALS_PER_DAY = 48;
export const MAX_SCHEDULE_OVERRIDES = 400;

const START_RE = /^(?:[01][0-9]|2[0-3]):[0-5][0-9]$/;
const END_RE = /^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/;

/** Minutes after local midnight of `HH:MM` (`24:00` is 1440). */
export function minutesOfDay(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

export const scheduleIntervalSchema = z
  .strictObject({
    start: z.string().regex(START_RE, { error: 'Must be HH:MM, 00:00 to 23:59.' }),
    end: z.string().regex(END_RE, { error: 'Must be HH:MM, 00:01 to 24:00.' }),
  })
  .superRefine((iv, ctx) => {
    if (START_RE.test(iv.start) && END_RE.test(iv.end) && minutesOfDay(iv.end) <= minutesOfDay(iv.start)) {
      addIssue(ctx, 'out_of_range', 'end must be after start.', ['end']);
    }
  })
  .meta({ id: 'ScheduleInterval', description: 'Local time interval [start, end) in the host timezone; end may be 24:00.' });

/** Intervals of one day: no overlap (touching, like 09:00-12:00 and 12:00-13:00, is fine). */
export const dayIntervalsSchema = z
  .array(scheduleIntervalSchema)
  .max(MAX_INTERVALS_PER_DAY)
  .superRefine((intervals, ctx) => {
    const valid = intervals
      .map((iv, index) => ({ index, start: iv.start, end: iv.end }))
      .filter((iv) => START_RE.test(iv.start) && END_RE.test(iv.end) && minutesOfDay(iv.end) > minutesOfDay(iv.start))
      .sort((a, b) => minutesOfDay(a.start) - minutesOfDay(b.start));
    let latestEnd = -1;
    for (const iv of valid) {
      if (minutesOfDay(iv.start) < latestEnd) addIssue(ctx, 'overlap', 'Intervals of a day must not overlap.', [iv.index, 'start']);
      latestEnd = Math.max(latestEnd, minutesOfDay(iv.end));
    }
  });

export const weeklyScheduleSchema = z
  .strictObject({
    mon: dayIntervalsSchema.optional(),
    tue: dayIntervalsSchema.optional(),
    wed: dayIntervalsSchema.optional(),
    thu: dayIntervalsSchema.optional(),
    fri: dayIntervalsSchema.optional(),
    sat: dayIntervalsSchema.optional(),
    sun: dayIntervalsSchema.optional(),
  })
  .meta({ id: 'WeeklySchedule', description: 'Weekly intervals per day; a missing day has no availability.' });

export const scheduleOverrideSchema = z
  .strictObject({
    date: localDateSchema,
    intervals: dayIntervalsSchema,
  })
  .meta({ id: 'ScheduleOverride', description: "Replaces that local date's weekly intervals; empty = day off." });

/** Body of PUT /admin/v1/workspaces/{ws}/hosts/{host}/schedule; replaces the whole schedule. */
export const putScheduleBodySchema = z
  .strictObject({
    weekly: weeklyScheduleSchema,
    overrides: z
      .array(scheduleOverrideSchema)
      .max(MAX_SCHEDULE_OVERRIDES)
      .superRefine((overrides, ctx) => {
        const seen = new Set<string>();
        overrides.forEach((o, i) => {
          if (typeof o.date !== 'string') return;
          if (seen.has(o.date)) addIssue(ctx, 'duplicate', 'Each date may have one override.', [i, 'date']);
          seen.add(o.date);
        });
      })
      .default([]),
  })
  .meta({ id: 'AdminPutScheduleRequest', description: 'Body of PUT /admin/v1/workspaces/{ws}/hosts/{host}/schedule.' });

export type ScheduleInterval = z.infer<typeof scheduleIntervalSchema>;
export type WeeklySchedule = z.infer<typeof weeklyScheduleSchema>;
export type ScheduleOverride = z.infer<typeof scheduleOverrideSchema>;
export type PutScheduleBody = z.infer<typeof putScheduleBodySchema>;
