import { fromZonedTime } from 'date-fns-tz';
import { MS_PER_DAY } from '@sched/contracts';
import type { CalendarEvent } from './calendar-provider';

/**
 * A busy stretch as kept in a snapshot: only the UID and the times, never titles or other details of
 * the host's events. `date` and `floating` items stay local so the host's time zone is applied when
 * they are read (a zone change then needs no re-read).
 */
export interface BusyItem {
  uid: string;
  kind: 'instant' | 'date' | 'floating';
  /** instant: RFC 3339 UTC; date: YYYY-MM-DD; floating: YYYY-MM-DDTHH:MM:SS. */
  start: string;
  end: string;
}

export interface Interval {
  start: Date;
  end: Date;
}

/** Transparent and cancelled events leave the host free; everything else blocks its time. */
export function busyItemsFrom(events: readonly CalendarEvent[]): BusyItem[] {
  const items: BusyItem[] = [];
  for (const e of events) {
    if (e.transparent || e.cancelled) continue;
    const t = e.timing;
    if (t.kind === 'instant') {
      if (t.end.getTime() <= t.start.getTime()) continue; // zero-length events block nothing
      items.push({ uid: e.uid, kind: 'instant', start: t.start.toISOString(), end: t.end.toISOString() });
    } else {
      items.push({ uid: e.uid, kind: t.kind, start: t.start, end: t.end });
    }
  }
  return items;
}

/** A local date or wall-clock time in `timeZone` as an instant (date-fns-tz handles DST gaps and overlaps). */
function localToInstant(local: string, timeZone: string): Date {
  return fromZonedTime(local.length === 10 ? `${local}T00:00:00` : local, timeZone);
}

/**
 * The items as UTC intervals, in the host's time zone: an all-day event blocks from the host's local
 * midnight of its first date to local midnight after its last date (so 23 or 25 hours on DST days).
 */
export function toIntervals(items: readonly BusyItem[], timeZone: string): Interval[] {
  const out: Interval[] = [];
  for (const item of items) {
    const start = item.kind === 'instant' ? new Date(item.start) : localToInstant(item.start, timeZone);
    const end = item.kind === 'instant' ? new Date(item.end) : localToInstant(item.end, timeZone);
    if (!Number.isNaN(start.getTime()) && !Number.isNaN(end.getTime()) && end.getTime() > start.getTime()) out.push({ start, end });
  }
  return out;
}

/** Sorted, with overlapping or touching intervals joined. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start.getTime() - b.start.getTime());
  const merged: Interval[] = [];
  for (const i of sorted) {
    const last = merged[merged.length - 1];
    if (last && i.start.getTime() <= last.end.getTime()) {
      if (i.end.getTime() > last.end.getTime()) last.end = i.end;
    } else {
      merged.push({ start: i.start, end: i.end });
    }
  }
  return merged;
}

export function overlapping<T extends Interval>(intervals: readonly T[], window: Interval): T[] {
  return intervals.filter((i) => i.start.getTime() < window.end.getTime() && i.end.getTime() > window.start.getTime());
}

/** The busy intervals of a window, from snapshot items, without the given UIDs (this service's own events). */
export function busyIntervals(items: readonly BusyItem[], opts: { timeZone: string; window: Interval; excludeUids: ReadonlySet<string> }): Interval[] {
  const kept = items.filter((i) => !opts.excludeUids.has(i.uid));
  return overlapping(mergeIntervals(toIntervals(kept, opts.timeZone)), opts.window);
}

/**
 * The range a host's snapshot caches, read as a whole: from the start of yesterday (UTC) to `days`
 * days after today. It moves once a day, so between midnights an unchanged calendar only needs the
 * ctag probe. A day of margin on both sides covers all-day events in any time zone.
 */
export function snapshotRange(now: Date, days: number): Interval {
  const today = Math.floor(now.getTime() / MS_PER_DAY) * MS_PER_DAY;
  return { start: new Date(today - MS_PER_DAY), end: new Date(today + (days + 1) * MS_PER_DAY) };
}

export function covers(range: Interval, window: Interval): boolean {
  return range.start.getTime() <= window.start.getTime() && range.end.getTime() >= window.end.getTime();
}

export function isFresh(fetchedAt: Date, now: Date, freshnessMs: number): boolean {
  return now.getTime() - fetchedAt.getTime() <= freshnessMs;
}
