import { toTimestamp } from '@sched/contracts';
import { sendData, type HttpApp } from '@sched/http';
import type { SyncRecord } from '../domain/ports';
import { resyncBooking, type SyncDeps } from '../domain/sync-booking';
import { pathId, pathWorkspace } from './path-params';

/** The calendar state of one Booking as this service knows it. */
export function syncRecordOut(r: SyncRecord) {
  return {
    booking_id: r.bookingId,
    booking_version: r.bookingVersion,
    status: r.status,
    error_code: r.errorCode,
    synced_version: r.writtenVersion === 0 ? null : r.writtenVersion,
    event_uid: r.eventUid,
    join_url: r.joinUrl,
    updated_at: toTimestamp(r.updatedAt),
  };
}

/**
 * decisions.md §13 recovery: writes the last known Booking state now (one attempt, no retries) and
 * answers the result; the outcome is also published (calendar.synced / calendar.sync_failed) so the
 * Booking follows. Unknown Booking: 404. Already synced: a no-op that answers the current state.
 */
export function registerCalendarResyncRoutes(http: HttpApp, deps: SyncDeps): void {
  http.route('POST', '/admin/v1/workspaces/:ws/bookings/:bkg/calendar-resync', async (req, res) => {
    const ws = pathWorkspace(req);
    const bookingId = pathId(req, 'bkg', 'bkg');
    const record = await resyncBooking(deps, { workspaceId: ws, bookingId });
    sendData(res, 200, syncRecordOut(record));
  });
}
