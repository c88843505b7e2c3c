import { toTimestamp, type AdminEventType, type EventType, type Host, type InternalHost, type Schedule } from '@sched/contracts';
import { bookabilityOf, type EventTypeView } from '../domain/event-type';
import type { HostRecord, ScheduleRecord } from '../domain/manage-hosts';

/** The v1 Event Type: exactly the fields of api-v1.md (no `access`). */
export function eventTypeOut(et: EventTypeView): EventType {
  const { bookable, unavailableReason } = bookabilityOf(et);
  return {
    id: et.id,
    host_id: et.hostId,
    name: et.name,
    description: et.description,
    slug: et.slug,
    duration_minutes: et.durationMinutes,
    slot_interval_minutes: et.slotIntervalMinutes,
    buffer_before_minutes: et.bufferBeforeMinutes,
    buffer_after_minutes: et.bufferAfterMinutes,
    minimum_notice_minutes: et.minimumNoticeMinutes,
    maximum_advance_minutes: et.maximumAdvanceMinutes,
    meeting_type: et.meetingType,
    status: et.status,
    bookable,
    unavailable_reason: unavailableReason,
    created_at: toTimestamp(et.createdAt),
    updated_at: toTimestamp(et.updatedAt),
  };
}

export function adminEventTypeOut(et: EventTypeView): AdminEventType {
  return { ...eventTypeOut(et), access: et.access };
}

export function hostOut(h: HostRecord): Host {
  return {
    id: h.id,
    workspace_id: h.workspaceId,
    name: h.name,
    email: h.email,
    timezone: h.timezone,
    conferencing_url_template: h.conferencingUrlTemplate,
    created_at: toTimestamp(h.createdAt),
    updated_at: toTimestamp(h.updatedAt),
  };
}

export function internalHostOut(h: HostRecord): InternalHost {
  return { id: h.id, name: h.name, email: h.email, timezone: h.timezone, conferencing_url_template: h.conferencingUrlTemplate };
}

export function scheduleOut(s: ScheduleRecord): Schedule {
  return { host_id: s.hostId, weekly: s.weekly, overrides: [...s.overrides], updated_at: toTimestamp(s.updatedAt) };
}
