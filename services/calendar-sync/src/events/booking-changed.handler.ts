import { bookingEventDataSchema } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import type { Logger } from '@sched/logger';
import type { EventHandler } from '@sched/messaging';
import type { CalendarProvider } from '../domain/calendar-provider';
import type { HostDirectory, SecretSealer } from '../domain/ports';
import { syncBooking } from '../domain/sync-booking';
import { createStore } from '../store/create-store';
import type { StoreCache } from '../store/store-cache';

/** The booking changes this service writes to calendars. */
export const BOOKING_EVENT_KINDS = ['booking.created', 'booking.rescheduled', 'booking.cancelled'] as const;

export interface BookingChangedDeps {
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
 * booking.created / rescheduled / cancelled → one calendar write, in the consumer's transaction (inbox
 * row, sync record, outbox event commit together). While the provider is unavailable the handler
 * throws so the consumer retries with its delays; on the last attempt the failure is recorded and
 * calendar.sync_failed published instead of dead-lettering the message.
 */
export function bookingChangedHandler(deps: BookingChangedDeps): EventHandler<DbTx> {
  return async (envelope, tx, info) => {
    if (!(BOOKING_EVENT_KINDS as readonly string[]).includes(envelope.type)) return;
    const data = bookingEventDataSchema.parse(envelope.data); // malformed data can never succeed: retries, then the DLQ
    const outcome = await syncBooking(
      { store: createStore(tx, deps.cache, { inTransaction: true }), provider: deps.provider, sealer: deps.sealer, hosts: deps.hosts },
      { workspaceId: envelope.workspace_id, booking: data.booking, finalAttempt: info.attempt > deps.retries },
    );
    const fields = { booking_id: data.booking.id, booking_version: data.booking.version, type: envelope.type, attempt: info.attempt };
    if (outcome.kind === 'up_to_date') deps.logger.info('calendar already matches this booking version; nothing written', fields);
    else if (outcome.kind === 'synced') deps.logger.info('calendar event written', { ...fields, synced_version: outcome.record.writtenVersion });
    else deps.logger.warn('calendar event could not be written', { ...fields, error_code: outcome.errorCode });
  };
}
