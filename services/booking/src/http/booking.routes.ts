import type { Request, Response } from 'express';
import { z } from 'zod';
import {
  cancelBookingBodySchema,
  createBookingBodySchema,
  DomainError,
  internalCreateBookingSchema,
  isId,
  listBookingsQuerySchema,
  rescheduleBookingBodySchema,
  type BookingSource,
  type CreateBookingBody,
} from '@sched/contracts';
import type { Db } from '@sched/db';
import { forbidden, parseBody, parseQuery, requestContext, requireWorkspace, sendData, type HttpApp } from '@sched/http';
import { parseIdempotencyKey, type IdempotentOutcome } from '@sched/idempotency';
import type { CursorCodec } from '@sched/pagination';
import { toBookingResource } from '../domain/booking';
import { cancelBooking, rescheduleBooking } from '../domain/change-booking';
import { answeredSlotChecker, askSlot, createBooking, newBookingRecord } from '../domain/create-booking';
import { listBookingsPage } from '../domain/list-bookings';
import type { SlotChecker } from '../domain/ports';
import { bookingUnitOfWork } from '../store/booking-unit-of-work';
import type { CreateBatcher } from '../store/create-batch.queries';
import { findBooking, listBookings } from '../store/booking.queries';
import { groupCommittedCreate } from './group-committed-create';
import { bookingEnvelope, idempotentMutation, sendOutcome } from './idempotent-response';

export interface BookingRouteDeps {
  db: Db;
  slots: SlotChecker;
  /** Group commit of creates whose slot check said "bookable". */
  creates: CreateBatcher;
  cursors: CursorCodec;
  clock: () => Date;
  /** FAULT_CRASH_AFTER_COMMIT (test only): die between commit and reply, as a crash would. */
  crashAfterCommit: boolean;
}

/** None of these endpoints takes query parameters; an unknown one is 400 (decisions.md §1). */
const noQuery = z.strictObject({});

/** A malformed id cannot exist, so it is the same 404 as an unknown one or another workspace's. */
function bookingIdOf(req: Request): string {
  const id = String(req.params.booking);
  if (!isId('bkg', id)) throw new DomainError('not_found');
  return id;
}

/** The five Booking endpoints of api-v1.md (behind the gateway), plus the hosted booking page's internal create. */
export function registerBookingRoutes(http: HttpApp, deps: BookingRouteDeps): void {
  const { db, slots } = deps;

  /**
   * Create, for the public API and for the hosted booking page (same rules and answers, other source). A
   * "bookable" slot check goes through the group commit (one transaction for the creates arriving together);
   * a refusal or a failed check takes the one-request transaction, which stores the refusal or replays a
   * finished key (a retry still replays while availability is down).
   */
  const create = async (req: Request, res: Response, workspaceId: string, body: CreateBookingBody, origin: { source: BookingSource; invitationId: string | null }) => {
    // A malformed Idempotency-Key is refused before anything is asked.
    parseIdempotencyKey(requestContext(req).idempotencyKey);
    const input = { ...origin, eventTypeId: body.event_type_id, startAt: body.start_at, guest: body.guest, metadata: body.metadata ?? {} };
    // Asked before the transaction opens: no pooled connection waits on availability's answer.
    const question = { eventTypeId: input.eventTypeId, startAt: input.startAt };
    const answer = await askSlot(slots, workspaceId, question);
    let outcome: IdempotentOutcome;
    if (answer.ok && answer.value.bookable) {
      const now = deps.clock();
      outcome = await groupCommittedCreate(req, deps.creates, newBookingRecord(workspaceId, input, answer.value, now), now);
    } else {
      const checked = answeredSlotChecker(slots, workspaceId, question, answer);
      outcome = await idempotentMutation(
        req,
        db,
        workspaceId,
        async (tx, ctx) => {
          const booking = await createBooking({ slots: checked, uow: bookingUnitOfWork(tx), now: deps.clock() }, ctx.workspaceId, input);
          return { status: 201, body: bookingEnvelope(toBookingResource(booking), ctx.requestId) };
        },
        // createBooking refuses (4xx) before its first write, and its insert turns an overlap into "no row"
        // instead of a failed statement, so the create needs no savepoint: two round trips fewer per booking.
        { savepoint: false },
      );
    }
    // Committed, not yet answered: the window the crash test needs (the retry must replay, not rebook).
    if (deps.crashAfterCommit && !outcome.replayed) process.kill(process.pid, 'SIGKILL');
    sendOutcome(res, outcome);
  };

  http.route('POST', '/v1/bookings', async (req, res) => {
    parseQuery(noQuery, req);
    const body = parseBody(createBookingBodySchema, req);
    await create(req, res, requireWorkspace(req), body, { source: 'api', invitationId: null });
  });

  /**
   * Internal (contracts internalCreateBookingSchema): the hosted booking page's create, called by the
   * invitation service, never routed by the gateway. The workspace is the path's; every query is scoped by it.
   */
  http.route('POST', '/internal/v1/workspaces/:ws/bookings', async (req, res) => {
    parseQuery(noQuery, req);
    const { source, invitation_id, ...body } = parseBody(internalCreateBookingSchema, req);
    // Only for the invitation the invitation service resolved for this visitor (or none, a public page).
    if ((invitation_id ?? undefined) !== requestContext(req).caller?.invitationId) throw forbidden('The credential is for another invitation.');
    await create(req, res, String(req.params.ws), body, { source, invitationId: invitation_id ?? null });
  });

  http.route('GET', '/v1/bookings', async (req, res) => {
    const query = parseQuery(listBookingsQuerySchema, req);
    const page = await listBookingsPage({ read: (p) => listBookings(db, p), cursors: deps.cursors }, requireWorkspace(req), query);
    sendData(res, 200, page.items.map(toBookingResource), { next_cursor: page.nextCursor });
  });

  http.route('GET', '/v1/bookings/:booking', async (req, res) => {
    parseQuery(noQuery, req);
    const workspaceId = requireWorkspace(req);
    const booking = await findBooking(db, workspaceId, bookingIdOf(req));
    if (!booking) throw new DomainError('not_found');
    sendData(res, 200, toBookingResource(booking));
  });

  http.route('POST', '/v1/bookings/:booking/reschedule', async (req, res) => {
    parseQuery(noQuery, req);
    const body = parseBody(rescheduleBookingBodySchema, req);
    const outcome = await idempotentMutation(req, db, requireWorkspace(req), async (tx, ctx) => {
      const booking = await rescheduleBooking({ slots, uow: bookingUnitOfWork(tx), now: deps.clock() }, ctx.workspaceId, bookingIdOf(req), {
        startAt: body.start_at,
        expectedVersion: body.expected_version,
      });
      return { status: 200, body: bookingEnvelope(toBookingResource(booking), ctx.requestId) };
    });
    sendOutcome(res, outcome);
  });

  http.route('POST', '/v1/bookings/:booking/cancel', async (req, res) => {
    parseQuery(noQuery, req);
    // The body is optional: none is the same as `{}`.
    const body = req.body === undefined ? {} : parseBody(cancelBookingBodySchema, req);
    const outcome = await idempotentMutation(req, db, requireWorkspace(req), async (tx, ctx) => {
      const booking = await cancelBooking({ uow: bookingUnitOfWork(tx), now: deps.clock() }, ctx.workspaceId, bookingIdOf(req), {
        expectedVersion: body.expected_version,
      });
      return { status: 200, body: bookingEnvelope(toBookingResource(booking), ctx.requestId) };
    });
    sendOutcome(res, outcome);
  });
}
