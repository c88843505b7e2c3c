import { minutesOfDay, WEEKDAYS, type ScheduleInterval, type ScheduleOverride, type WeeklySchedule } from '@sched/contracts';
import { addDays, dateToWall, isoWeekdayIndex, MINUTE_MS, wallToInstant } from './local-time';
import type { Interval } from './slot-engine';

export interface HostSchedule {
  weekly: WeeklySchedule;
  overrides: readonly ScheduleOverride[];
}

/** decisions.md §7: a schedule with at least one interval somewhere (weekly or in an override). */
export function scheduleHasAvailability(schedule: HostSchedule): boolean {
  return WEEKDAYS.some((d) => (schedule.weekly[d]?.length ?? 0) > 0) || schedule.overrides.some((o) => o.intervals.length > 0);
}

/** The intervals of one local date: its override if it has one (empty = day off), else its weekday's. */
export function intervalsOfDate(schedule: HostSchedule, date: string, overrides?: ReadonlyMap<string, readonly ScheduleInterval[]>): readonly ScheduleInterval[] {
  const byDate = overrides ?? overrideMap(schedule);
  return byDate.get(date) ?? schedule.weekly[WEEKDAYS[isoWeekdayIndex(date)]!] ?? [];
}

function overrideMap(schedule: HostSchedule): Map<string, readonly ScheduleInterval[]> {
  return new Map(schedule.overrides.map((o) => [o.date, o.intervals]));
}

/**
 * The schedule's intervals on the host's local dates [fromDate, toDate], as instants. Each local
 * time becomes the first instant the host's clock reads it (wallToInstant): a 09:00–17:00 day stays
 * 09:00–17:00 local whatever the offset; an interval reaching into a spring-forward gap ends (or
 * starts) at the change, so it covers exactly the local times that exist; an ambiguous fall-back
 * time means its first occurrence, so 01:00–05:00 on a 25-hour day spans five local-clock hours and
 * six real ones. `24:00` is the start of the next date. Intervals left empty (02:00–02:30 inside a
 * gap) are dropped. Each interval keeps its own start as its grid origin; the engine joins touching
 * ones for containment.
 */
export function resolveAvailability(schedule: HostSchedule, timeZone: string, fromDate: string, toDate: string): Interval[] {
  const overrides = overrideMap(schedule);
  const out: Interval[] = [];
  for (let date = fromDate; date <= toDate; date = addDays(date, 1)) {
    const midnight = dateToWall(date);
    for (const iv of intervalsOfDate(schedule, date, overrides)) {
      const start = wallToInstant(timeZone, midnight + minutesOfDay(iv.start) * MINUTE_MS);
      const end = wallToInstant(timeZone, midnight + minutesOfDay(iv.end) * MINUTE_MS);
      if (end > start) out.push({ start, end });
    }
  }
  return out;
}
