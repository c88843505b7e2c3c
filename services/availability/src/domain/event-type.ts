import type { EventTypeAccess, EventTypeStatus, MeetingType, UnavailableReason } from '@sched/contracts';
import { MINUTE_MS } from './local-time';
import type { SlotRules } from './slot-engine';

/** State of a host's calendar connection as last reported by calendar-sync; null = never connected. */
export type CalendarConnectionStatus = 'connected' | 'error' | 'disconnected';

export interface EventTypeRecord {
  id: string;
  workspaceId: string;
  hostId: string;
  name: string;
  description: string | null;
  slug: string;
  durationMinutes: number;
  slotIntervalMinutes: number;
  bufferBeforeMinutes: number;
  bufferAfterMinutes: number;
  minimumNoticeMinutes: number;
  maximumAdvanceMinutes: number;
  meetingType: MeetingType;
  status: EventTypeStatus;
  access: EventTypeAccess;
  createdAt: Date;
  updatedAt: Date;
}

/** An Event Type with what its `bookable` depends on: its host's calendar and schedule. */
export interface EventTypeView extends EventTypeRecord {
  calendarStatus: CalendarConnectionStatus | null;
  hostHasAvailability: boolean;
}

export interface Bookability {
  bookable: boolean;
  unavailableReason: UnavailableReason | null;
}

/**
 * decisions.md §7: bookable only when active, the host's calendar is connected and the host has a
 * non-empty schedule; otherwise the first reason that applies, in this order.
 */
export function bookabilityOf(view: Pick<EventTypeView, 'status' | 'calendarStatus' | 'hostHasAvailability'>): Bookability {
  const reason: UnavailableReason | null =
    view.status !== 'active'
      ? 'inactive'
      : view.calendarStatus === null || view.calendarStatus === 'disconnected'
        ? 'calendar_not_connected'
        : view.calendarStatus === 'error'
          ? 'calendar_error'
          : !view.hostHasAvailability
            ? 'no_availability'
            : null;
  return { bookable: reason === null, unavailableReason: reason };
}

export function slotRulesOf(et: EventTypeRecord): SlotRules {
  return {
    durationMs: et.durationMinutes * MINUTE_MS,
    stepMs: et.slotIntervalMinutes * MINUTE_MS,
    bufferBeforeMs: et.bufferBeforeMinutes * MINUTE_MS,
    bufferAfterMs: et.bufferAfterMinutes * MINUTE_MS,
    minimumNoticeMs: et.minimumNoticeMinutes * MINUTE_MS,
    maximumAdvanceMs: et.maximumAdvanceMinutes * MINUTE_MS,
  };
}
