import { DomainError, makeEvent, type Booking, type CalendarErrorCode } from '@sched/contracts';
import { bookingEvent, bookingEventUid, joinUrlFor } from './booking-event';
import { refreshHostDetails } from './calendar-connections';
import { isProviderError, ProviderError, type CalendarProvider } from './calendar-provider';
import { accessFor, calendarErrorCode, noteProviderFailure, noteProviderSuccess } from './connection-status';
import type { Connection, HostDirectory, OutboxEvent, SecretSealer, Store, SyncRecord } from './ports';

export interface SyncDeps {
  store: Store;
  provider: CalendarProvider;
  sealer: SecretSealer;
  hosts: HostDirectory;
}

export type SyncOutcome =
  | { kind: 'up_to_date'; record: SyncRecord }
  | { kind: 'synced'; record: SyncRecord }
  | { kind: 'failed'; record: SyncRecord; errorCode: CalendarErrorCode };

/** The provider is unavailable and attempts remain: the message handler lets this through so the delivery is retried. */
export class RetryLaterError extends Error {
  constructor(cause: ProviderError) {
    super(`calendar provider unavailable; will retry: ${cause.message}`, { cause });
    this.name = 'RetryLaterError';
  }
}

/**
 * A booking.* message: make the calendar match the newest state known for the Booking. Stale
 * messages (a version the calendar already matches or has passed, e.g. a late booking.created
 * after the cancel) change nothing. `finalAttempt`: no retry follows, so an unavailable provider
 * is reported as a failure instead of being retried.
 */
export async function syncBooking(deps: SyncDeps, input: { workspaceId: string; booking: Booking; finalAttempt: boolean }): Promise<SyncOutcome> {
  const record = await deps.store.lockSyncRecord(input.workspaceId, input.booking, bookingEventUid(input.booking.id));
  return writeLatest(deps, record, input.finalAttempt);
}

/**
 * syncBooking for a record the caller has already locked with the message's Booking (the booking.*
 * consumer's claim, store/message-transaction.ts, which records the inbox row in the same statement).
 */
export function syncLockedRecord(deps: SyncDeps, record: SyncRecord, finalAttempt: boolean): Promise<SyncOutcome> {
  return writeLatest(deps, record, finalAttempt);
}

/**
 * Recovery (decisions.md §13): re-runs the last known Booking state at once, without retries.
 * Already synced to the newest version: nothing to do, the record is returned as it is.
 */
export async function resyncBooking(deps: SyncDeps, input: { workspaceId: string; bookingId: string }): Promise<SyncRecord> {
  return deps.store.transaction(async (store) => {
    const record = await store.lockExistingSyncRecord(input.workspaceId, input.bookingId);
    if (!record) throw new DomainError('not_found');
    const outcome = await writeLatest({ ...deps, store }, record, true);
    return outcome.record;
  });
}

async function writeLatest(deps: SyncDeps, record: SyncRecord, finalAttempt: boolean): Promise<SyncOutcome> {
  const { store } = deps;
  const booking = record.booking;
  if (record.writtenVersion >= booking.version) return { kind: 'up_to_date', record };

  const conn = await store.findConnection(record.workspaceId, record.hostId);
  try {
    const written = await applyToCalendar(deps, conn, record);
    if (conn) await noteProviderSuccess(store, conn);
    const updated = await store.updateSyncRecord(record, { writtenVersion: booking.version, status: 'synced', errorCode: null, ...written }, syncedEvent(record, written.joinUrl));
    return { kind: 'synced', record: updated };
  } catch (err) {
    if (!isProviderError(err)) throw err;
    if (err.kind === 'unavailable' && !finalAttempt) throw new RetryLaterError(err);
    if (conn) await noteProviderFailure(store, conn, err);
    const errorCode = calendarErrorCode(err.kind);
    const updated = await store.updateSyncRecord(
      record,
      { writtenVersion: record.writtenVersion, status: 'failed', errorCode, objectUrl: record.objectUrl, etag: record.etag, joinUrl: record.joinUrl },
      failedEvent(record, errorCode),
    );
    return { kind: 'failed', record: updated, errorCode };
  }
}

/** One write: put the event of a confirmed Booking, delete that of a cancelled one. */
async function applyToCalendar(
  deps: SyncDeps,
  conn: Connection | null,
  record: SyncRecord,
): Promise<{ objectUrl: string | null; etag: string | null; joinUrl: string | null }> {
  const booking = record.booking;
  if (booking.status === 'cancelled') {
    const joinUrl = record.joinUrl ?? booking.meeting.join_url;
    // Never written (e.g. cancelled before its first write succeeded): the calendar already matches.
    if (!record.objectUrl) return { objectUrl: null, etag: null, joinUrl };
    if (!conn) throw new ProviderError('calendar_not_found', 'the host has no calendar connection');
    await deps.provider.deleteEvent(accessFor(conn, deps.sealer), record.objectUrl);
    return { objectUrl: null, etag: null, joinUrl };
  }
  if (!conn) throw new ProviderError('calendar_not_found', 'the host has no calendar connection');
  const joinUrl = record.joinUrl ?? joinUrlFor(booking, await conferencingTemplate(deps, conn, booking));
  const access = accessFor(conn, deps.sealer);
  const written = await deps.provider.putEvent(access, bookingEvent(booking, joinUrl));
  if (record.objectUrl && record.objectUrl !== written.objectUrl) {
    // The connection now points at another calendar: remove the copy left in the old one. Best effort:
    // the new event is written either way.
    await deps.provider.deleteEvent(access, record.objectUrl).catch(() => undefined);
  }
  // A link the provider made (Google Meet) when the Booking and the template gave none; kept from then on.
  return { objectUrl: written.objectUrl, etag: written.etag, joinUrl: joinUrl ?? written.joinUrl ?? null };
}

/**
 * The host's current conferencing template, from availability; the copy kept with the connection
 * when availability cannot answer, so a short outage there does not block calendar writes.
 */
async function conferencingTemplate(deps: SyncDeps, conn: Connection, booking: Booking): Promise<string | null> {
  if (booking.meeting.type !== 'video' || booking.meeting.join_url) return conn.conferencingUrlTemplate;
  const host = await refreshHostDetails(deps, conn);
  return host ? host.conferencing_url_template : conn.conferencingUrlTemplate;
}

function syncedEvent(record: SyncRecord, joinUrl: string | null): OutboxEvent {
  return makeEvent('calendar.synced', {
    workspaceId: record.workspaceId,
    data: { booking_id: record.bookingId, booking_version: record.booking.version, status: 'synced', join_url: joinUrl, event_uid: record.eventUid },
  });
}

function failedEvent(record: SyncRecord, errorCode: CalendarErrorCode): OutboxEvent {
  return makeEvent('calendar.sync_failed', {
    workspaceId: record.workspaceId,
    data: { booking_id: record.bookingId, booking_version: record.booking.version, error_code: errorCode },
  });
}
