import type { Request, Response } from 'express';
import { DomainError, internalCreateBookingSchema, isId, type BookingSource, type CreateBookingBody } from '@sched/contracts';
import type { Db } from '@sched/db';
import { forbidden, NO_QUERY, parseBody, parseQuery, registerOperations, requestContext, requireWorkspace, sendData, type HttpApp } from '@sched/http';
import { dataAnswer } from '@sched/idempotency';
import type { CursorCodec } from '@sched/pagination';
import { toBookingResource } from '../domain/booking';
import { cancelBooking, rescheduleBooking } from '../domain/change-booking';
import { createBooking, type CreateBookingDeps } from '../domain/create-booking';
import { listBookingsPage } from '../domain/list-bookings';
import type { SlotChecker } from '../domain/ports';
import { bookingUnitOfWork } from '../store/booking-unit-of-work';
import { findBooking, listBookings } from '../store/booking.queries';
import { createKey, idempotentMutation, sendOutcome, sendStoredJson } from './idempotent-response';

export interface BookingRouteDeps {
  db: Db;
  slots: SlotChecker;
  /** The create use case's collaborators (its store is group-committed). */
  create: CreateBookingDeps;
  cursors: CursorCodec;
  clock: () => Date;
}

/** A malformed id cannot exist, so it is the same 404 as an unknown one or another workspace's. */
function bookingIdOf(id: string): string {
  if (!isId('bkg', id)) throw new DomainError('not_found');
  return id;
}

/** The five Booking endpoints of api-v1.md (behind the gateway), plus the hosted booking page's internal create. */
export function registerBookingRoutes(http: HttpApp, deps: BookingRouteDeps): void {
  const { db, slots } = deps;

  /** Create, for the public API and for the hosted booking page (same rules and answers, other source). */
  const create = async (req: Request, res: Response, workspaceId: string, body: CreateBookingBody, origin: { source: BookingSource; invitationId: string | null }) => {
    const outcome = await createBooking(deps.create, {
      workspaceId,
      input: { source: origin.source, invitationId: origin.invitationId, eventTypeId: body.event_type_id, startAt: body.start_at, guest: body.guest, metadata: body.metadata ?? {} },
      // A malformed Idempotency-Key is refused (400) here, before anything is asked.
      key: createKey(req, workspaceId),
      requestId: requestContext(req).requestId,
    });
    if (outcome.kind === 'replayed') sendOutcome(res, outcome.answer);
    // With a key, the body stored under it, as stored (a replay sends the same bytes); without, the Booking.
    else if (outcome.answer !== undefined) sendStoredJson(res, 201, outcome.answer);
    else sendData(res, 201, toBookingResource(outcome.booking));
  };

  /**
   * Internal (contracts internalCreateBookingSchema): the hosted booking page's create, called by the
   * invitation service, never routed by the gateway. The workspace is the path's; every query is scoped by it.
   */
  http.route('POST', '/internal/v1/workspaces/:ws/bookings', async (req, res) => {
    parseQuery(NO_QUERY, req);
    const { source, invitation_id, ...body } = parseBody(internalCreateBookingSchema, req);
    // Only for the invitation the invitation service resolved for this visitor (or none, a public page).
    if ((invitation_id ?? undefined) !== requestContext(req).caller?.invitationId) throw forbidden('The credential is for another invitation.');
    await create(req, res, String(req.params.ws), body, { source, invitationId: invitation_id ?? null });
  });

  // The five v1 operations (libs/contracts V1_OPERATIONS, owner booking): query and body parsed from the table.
  registerOperations(http, 'booking', {
    async createBooking({ body }, req, res) {
      await create(req, res, requireWorkspace(req), body, { source: 'api', invitationId: null });
    },

    async listBookings({ query }, req, res) {
      const page = await listBookingsPage({ read: (p) => listBookings(db, p), cursors: deps.cursors }, requireWorkspace(req), query);
      sendData(res, 200, page.items.map(toBookingResource), { next_cursor: page.nextCursor });
    },

    async getBooking({ params }, req, res) {
      const booking = await findBooking(db, requireWorkspace(req), bookingIdOf(params.booking));
      if (!booking) throw new DomainError('not_found');
      sendData(res, 200, toBookingResource(booking));
    },

    async rescheduleBooking({ params, body }, req, res) {
      const outcome = await idempotentMutation(req, db, requireWorkspace(req), async (tx, ctx) => {
        const booking = await rescheduleBooking({ slots, uow: bookingUnitOfWork(tx), now: deps.clock() }, ctx.workspaceId, bookingIdOf(params.booking), {
          startAt: body.start_at,
          expectedVersion: body.expected_version,
        });
        return dataAnswer(200, toBookingResource(booking), ctx.requestId);
      });
      sendOutcome(res, outcome);
    },

    // The body is optional: none is the same as `{}`.
    async cancelBooking({ params, body }, req, res) {
      const outcome = await idempotentMutation(req, db, requireWorkspace(req), async (tx, ctx) => {
        const booking = await cancelBooking({ uow: bookingUnitOfWork(tx), now: deps.clock() }, ctx.workspaceId, bookingIdOf(params.booking), {
          expectedVersion: body?.expected_version,
        });
        return dataAnswer(200, toBookingResource(booking), ctx.requestId);
      });
      sendOutcome(res, outcome);
    },
  });
}
