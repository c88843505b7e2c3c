import { makeBooking } from '@sched/testing';
import { bookingEventUid } from '../../src/domain/booking-event';
import { ProviderError, type CalendarProvider, type OutgoingEvent } from '../../src/domain/calendar-provider';
import type { Connection, OutboxEvent, Store, SyncRecord, SyncRecordChange } from '../../src/domain/ports';
import { syncBooking } from '../../src/domain/sync-booking';

/**
 * syncBooking with stub ports: the parts of a write that depend on what the provider answers
 * (a join link it made, a revoked OAuth grant). The database-backed flows are in event-writes.test.ts.
 */

const now = new Date('2026-12-01T08:00:00Z');
const conn: Connection = {
  id: 'cal_1',
  workspaceId: 'wsp_1',
  hostId: 'hst_1',
  provider: 'google',
  url: 'https://www.googleapis.com/',
  username: 'host@example.com',
  passwordSealed: 'sealed',
  calendarUrl: 'primary',
  hostTimezone: 'Europe/Paris',
  conferencingUrlTemplate: null,
  status: 'connected',
  errorCode: null,
  createdAt: now,
  updatedAt: now,
};

function harness(put: (event: OutgoingEvent) => Promise<{ objectUrl: string; etag: string | null; joinUrl?: string | null }>) {
  const booking = makeBooking({ host_id: conn.hostId });
  const changes: Array<{ change: SyncRecordChange; event: OutboxEvent | null }> = [];
  const statuses: string[] = [];
  const record: SyncRecord = {
    bookingId: booking.id,
    workspaceId: conn.workspaceId,
    hostId: conn.hostId,
    booking,
    bookingVersion: 1,
    writtenVersion: 0,
    status: 'pending',
    errorCode: null,
    eventUid: bookingEventUid(booking.id),
    objectUrl: null,
    etag: null,
    joinUrl: null,
    updatedAt: now,
  };
  const store = {
    lockSyncRecord: async () => record,
    findConnection: async () => conn,
    updateHostDetails: async () => undefined,
    setConnectionStatus: async (_c: Connection, status: string, code: string | null) => {
      statuses.push(`${status}:${code}`);
      return true;
    },
    updateSyncRecord: async (r: SyncRecord, change: SyncRecordChange, event: OutboxEvent | null) => {
      changes.push({ change, event });
      return { ...r, ...change };
    },
  } as unknown as Store;
  const provider = { putEvent: (_a: unknown, e: OutgoingEvent) => put(e) } as unknown as CalendarProvider;
  const deps = {
    store,
    provider,
    sealer: { seal: (s: string) => s, open: (s: string) => s },
    hosts: { getHost: async () => ({ id: conn.hostId, timezone: 'Europe/Paris', conferencing_url_template: null }) as never },
  };
  return { deps, booking, changes, statuses };
}

describe('syncBooking with what the provider answers', () => {
  it('a video Booking with no link of its own or from a template keeps the link the provider made (Google Meet)', async () => {
    const seen: OutgoingEvent[] = [];
    const { deps, booking, changes } = harness(async (e) => {
      seen.push(e);
      return { objectUrl: 'https://www.googleapis.com/calendar/v3/calendars/primary/events/abc', etag: '"1"', joinUrl: 'https://meet.google.com/abc-defg-hij' };
    });
    const outcome = await syncBooking(deps, { workspaceId: conn.workspaceId, booking, finalAttempt: false });
    expect(seen[0]).toMatchObject({ video: true, joinUrl: null });
    expect(outcome.kind).toBe('synced');
    expect(changes[0]!.change.joinUrl).toBe('https://meet.google.com/abc-defg-hij');
    expect(changes[0]!.event).toMatchObject({ type: 'calendar.synced', data: { join_url: 'https://meet.google.com/abc-defg-hij' } });
  });

  it('a revoked grant (reauthorization_required) fails at once with auth_failed and breaks the connection', async () => {
    const { deps, booking, changes, statuses } = harness(async () => {
      throw new ProviderError('reauthorization_required', 'token refresh: Google answered invalid_grant');
    });
    const outcome = await syncBooking(deps, { workspaceId: conn.workspaceId, booking, finalAttempt: false });
    expect(outcome).toMatchObject({ kind: 'failed', errorCode: 'auth_failed' });
    expect(changes[0]!.event).toMatchObject({ type: 'calendar.sync_failed', data: { error_code: 'auth_failed' } });
    expect(statuses).toEqual(['reauthorization_required:auth_failed']);
  });
});
