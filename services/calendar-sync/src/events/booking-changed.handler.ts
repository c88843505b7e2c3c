import type { Pool } from 'pg';
import { bookingEventDataSchema } from '@sched/contracts';
import type { Logger } from '@sched/logger';
import type { DeliveryInfo, EventEnvelope } from '@sched/messaging';
import { bookingEventUid } from '../domain/booking-event';
import type { CalendarProvider } from '../domain/calendar-provider';
import type { HostDirectory, SecretSealer } from '../domain/ports';
import { syncLockedRecord } from '../domain/sync-booking';
import { inMessageTransaction } from '../store/message-transaction';
import type { StoreCache } from '../store/store-cache';

/** The booking changes this service writes to calendars. */
export const BOOKING_EVENT_KINDS = ['booking.created', 'booking.rescheduled', 'booking.cancelled'] as const;

export function isBookingEvent(envelope: Pick<EventEnvelope, 'type'>): boolean {
  return (BOOKING_EVENT_KINDS as readonly string[]).includes(envelope.type);
}

export interface BookingChangedDeps {
  /** The service's pool: each message takes one connection for its transaction (store/message-transaction.ts). */
  pool: Pool;
  provider: CalendarProvider;
  sealer: SecretSealer;
  hosts: HostDirectory;
  /** Number of retries the consumer makes (length of its retry delays): the attempt after them is the last. */
  retries: number;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** The process's copies of connections (a write reads its host's connection). */
  cache?: StoreCache;
}

/**
 * booking.created / rescheduled / cancelled → one calendar write, in one transaction of its own that
 * records the message in the inbox, locks the sync record, and commits the outcome with its outbox event
 * (store/message-transaction.ts): a redelivered message finds its inbox row and changes nothing. While the
 * provider is unavailable the handler throws (the transaction rolls back) so the consumer retries with its
 * delays; on the last attempt the failure is recorded and calendar.sync_failed published instead of
 * dead-lettering the message.
 */
export function bookingChangedHandler(deps: BookingChangedDeps): (envelope: EventEnvelope, info: DeliveryInfo) => Promise<void> {
  return async (envelope, info) => {
    if (!isBookingEvent(envelope)) return;
    const data = bookingEventDataSchema.parse(envelope.data); // malformed data can never succeed: retries, then the DLQ
    const { booking } = data;
    const message = { eventId: envelope.id, type: envelope.type, workspaceId: envelope.workspace_id, booking, eventUid: bookingEventUid(booking.id) };
    const outcome = await inMessageTransaction(deps.pool, deps.cache, message, (record, store) =>
      record ? syncLockedRecord({ store, provider: deps.provider, sealer: deps.sealer, hosts: deps.hosts }, record, info.attempt > deps.retries) : Promise.resolve(null),
    );
    if (!outcome) {
      deps.logger.info('duplicate event skipped', { type: envelope.type });
      return;
    }
    const fields = { booking_id: booking.id, booking_version: booking.version, type: envelope.type, attempt: info.attempt };
    if (outcome.kind === 'up_to_date') deps.logger.info('calendar already matches this booking version; nothing written', fields);
    else if (outcome.kind === 'synced') deps.logger.info('calendar event written', { ...fields, synced_version: outcome.record.writtenVersion });
    else deps.logger.warn('calendar event could not be written', { ...fields, error_code: outcome.errorCode });
  };
}
