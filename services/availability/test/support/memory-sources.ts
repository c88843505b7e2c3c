import { DomainError } from '@sched/contracts';
import type { HostSchedule } from '../../src/domain/availability-resolver';
import type { EventTypeView } from '../../src/domain/event-type';
import type { SlotContext, SlotSources } from '../../src/domain/find-slots';
import type { Interval } from '../../src/domain/slot-engine';

export const WS = 'wsp_AAAAAAAAAAAAAAAAAAAAAA';

/** An active, bookable Event Type: 30-minute meetings on a 30-minute grid, no buffers or notice. */
export function eventTypeView(over: Partial<EventTypeView> = {}): EventTypeView {
  return {
    id: 'evt_AAAAAAAAAAAAAAAAAAAAAA',
    workspaceId: WS,
    hostId: 'hst_AAAAAAAAAAAAAAAAAAAAAA',
    name: 'Intro call',
    description: null,
    slug: 'intro',
    durationMinutes: 30,
    slotIntervalMinutes: 30,
    bufferBeforeMinutes: 0,
    bufferAfterMinutes: 0,
    minimumNoticeMinutes: 0,
    maximumAdvanceMinutes: 525_600,
    meetingType: 'video',
    status: 'active',
    access: 'public',
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    updatedAt: new Date('2026-01-01T00:00:00.000Z'),
    calendarStatus: 'connected',
    hostHasAvailability: true,
    ...over,
  };
}

export const everyDay = (start: string, end: string): HostSchedule['weekly'] =>
  Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start, end }]]));

export interface MemoryBooking extends Interval {
  id: string;
}

/** SlotSources over plain values; records the busy ranges asked for. */
export function memorySources(opts: {
  eventType?: Partial<EventTypeView>;
  hostTimezone: string;
  schedule: HostSchedule;
  calendar?: Interval[] | 'not_connected' | 'unavailable';
  bookings?: MemoryBooking[];
}): SlotSources & { calendarCalls: Interval[] } {
  const ctx: SlotContext = { eventType: eventTypeView(opts.eventType), hostTimezone: opts.hostTimezone, schedule: opts.schedule };
  const calendarCalls: Interval[] = [];
  return {
    calendarCalls,
    loadContext: async (ws, id) => (ws === WS && id === ctx.eventType.id ? ctx : null),
    bookedIntervals: async (_ws, _host, range, exclude) =>
      (opts.bookings ?? []).filter((b) => b.id !== exclude && b.start < range.end && b.end > range.start),
    calendarBusy: async (_ws, _host, range) => {
      calendarCalls.push(range);
      if (opts.calendar === 'unavailable') throw new DomainError('calendar_unavailable', { retryAfterSeconds: 5 });
      if (opts.calendar === 'not_connected') return 'not_connected';
      return (opts.calendar ?? []).filter((b) => b.start < range.end && b.end > range.start);
    },
  };
}
