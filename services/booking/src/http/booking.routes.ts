import type { ServerResponse } from 'node:http';
import { DomainError, internalCreateBookingSchema, isId, V1_OPERATIONS, type BookingSource, type CreateBookingBody } from '@sched/contracts';
import type { Db } from '@sched/db';
import {
  forbidden,
  NO_QUERY,
  parseBody,
  parseQuery,
  registerOperations,
  requestContext,
  requireWorkspace,
  sendData,
  type FastRequest,
  type FastStep,
  type HttpApp,
  type HttpMethod,
} from '@sched/http';
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

/** POST /v1/bookings (libs/contracts V1_OPERATIONS). */
const CREATE_PATH = V1_OPERATIONS.find((op) => op.operationId === 'createBooking')!.path;
const INTERNAL_CREATE_PATH = '/internal/v1/workspaces/:ws/bookings';

/**
 * `http` as registerOperations sees it, keeping the handlers `http.route` answers for the route `method`
 * `path` (every step the router runs after routing: access check, body parser, input guard, the operation's
 * handler) in `kept`.
 */
function keepingSteps(http: HttpApp, method: HttpMethod, path: string, kept: { steps?: FastStep[] }): HttpApp {
  const route = (m: HttpMethod, p: string, ...rest: unknown[]): FastStep[] => {
    const steps = (http.route as (m: HttpMethod, p: string, ...rest: unknown[]) => FastStep[])(m, p, ...rest);
    if (m === method && p === path) kept.steps = steps;
    return steps;
  };
  return { ...http, route: route as HttpApp['route'] };
}

/**
 * The five Booking endpoints of api-v1.md (behind the gateway), plus the hosted booking page's internal create.
 *
 * The two creates are served on the app's fast path (libs/http fast-path.ts; docs/booking.md, "Fast path"):
 * a create whose method and path are exactly the route's runs the same steps the router would run for it
 * (the request context with the credential's check, close-while-stopping, the access rule, the body parser,
 * the input guard, the handler), without express's app.handle and router walk; anything else goes to express.
 * Their handlers use node's request and response (and the request's `path`: idempotent-response.ts). No
 * express layer acts on these requests between the request context and the routes, and no POST route
 * registered before them could match their paths.
 */
export function registerBookingRoutes(http: HttpApp, deps: BookingRouteDeps): void {
  const { db, slots } = deps;

  /** Create, for the public API and for the hosted booking page (same rules and answers, other source). */
  const create = async (req: FastRequest, res: ServerResponse, workspaceId: string, body: CreateBookingBody, origin: { source: BookingSource; invitationId: string | null }) => {
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
  const internalCreate: FastStep = async (req, res) => {
    parseQuery(NO_QUERY, req);
    const { source, invitation_id, ...body } = parseBody(internalCreateBookingSchema, req);
    // Only for the invitation the invitation service resolved for this visitor (or none, a public page).
    if ((invitation_id ?? undefined) !== requestContext(req).caller?.invitationId) throw forbidden('The credential is for another invitation.');
    await create(req, res, String(req.params.ws), body, { source, invitationId: invitation_id ?? null });
  };
  const internalSteps = http.route('POST', INTERNAL_CREATE_PATH, internalCreate);

  // The five v1 operations (libs/contracts V1_OPERATIONS, owner booking): query and body parsed from the table.
  // registerOperations puts only GETs on a fast path, so the create's route steps are kept as it registers them.
  const v1Create: { steps?: FastStep[] } = {};
  registerOperations(keepingSteps(http, 'POST', CREATE_PATH, v1Create), 'booking', {
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
  if (!v1Create.steps) throw new Error(`booking: no route was registered for POST ${CREATE_PATH}`);

  http.fastPath({
    routes: [
      { method: 'POST', pattern: INTERNAL_CREATE_PATH, steps: internalSteps },
      { method: 'POST', pattern: CREATE_PATH, steps: v1Create.steps },
    ],
  });
}
