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
import { dataAnswer } from '@sched/idempotency';
import type { CursorCodec } from '@sched/pagination';
import { toBookingResource } from '../domain/booking';
import { cancelBooking, rescheduleBooking } from '../domain/change-booking';
import { createBooking, type CreateBookingDeps } from '../domain/create-booking';
import { listBookingsPage } from '../domain/list-bookings';
import type { SlotChecker } from '../domain/ports';
import { bookingUnitOfWork } from '../store/booking-unit-of-work';
import { findBooking, listBookings } from '../store/booking.queries';
import { createKey, idempotentMutation, sendOutcome } from './idempotent-response';

export interface BookingRouteDeps {
  db: Db;
  slots: SlotChecker;
  /** The create use case's collaborators (its store is group-committed). */
  create: CreateBookingDeps;
  cursors: CursorCodec;
  clock: () => Date;
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

  /** Create, for the public API and for the hosted booking page (same rules and answers, other source). */
  const create = async (req: Request, res: Response, workspaceId: string, body: CreateBookingBody, origin: { source: BookingSource; invitationId: string | null }) => {
    const outcome = await createBooking(deps.create, {
      workspaceId,
      input: { ...origin, eventTypeId: body.event_type_id, startAt: body.start_at, guest: body.guest, metadata: body.metadata ?? {} },
      // A malformed Idempotency-Key is refused (400) here, before anything is asked.
      key: createKey(req, workspaceId),
      requestId: requestContext(req).requestId,
    });
    if (outcome.kind === 'created') sendData(res, 201, toBookingResource(outcome.booking));
    else sendOutcome(res, outcome.answer);
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
      return dataAnswer(200, toBookingResource(booking), ctx.requestId);
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
      return dataAnswer(200, toBookingResource(booking), ctx.requestId);
    });
    sendOutcome(res, outcome);
  });
}
