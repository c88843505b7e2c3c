import type { DbTx } from '@sched/db';
import { enqueueEvent } from '@sched/messaging';
import type { BookingUnitOfWork } from '../domain/ports';
import { announcementEnvelope } from '../events/booking-events';
import { findBookingForUpdate, updateBooking } from './booking.queries';
import { outbox } from './schema';

/** The domain's storage port on one transaction: row changes and their outbox events commit together. */
export function bookingUnitOfWork(tx: DbTx): BookingUnitOfWork {
  return {
    findForUpdate: (workspaceId, id) => findBookingForUpdate(tx, workspaceId, id),
    update: (workspaceId, id, changes) => updateBooking(tx, workspaceId, id, changes),
    announce: (event) => enqueueEvent(tx, outbox, announcementEnvelope(event)),
  };
}
