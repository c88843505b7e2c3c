import type { Request, Response } from 'express';
import { DEFAULT_LIST_LIMIT, DomainError } from '@sched/contracts';
import { parseIdempotencyKey, requestFingerprint, runIdempotent, type ResponseSealer, type StoredResponse } from '@sched/idempotency';
import { registerOperations, requestContext, requireWorkspace, sendData, type HttpApp, type OperationHandlers } from '@sched/http';
import type { CursorCodec } from '@sched/pagination';
import type { Db, DbTx } from '@sched/db';
import * as manage from '../domain/manage-invitations';
import type { EventTypeDirectory, InvitationStore, ListPosition } from '../domain/ports';
import { idempotencyKeys } from '../store/schema';
import { invitationOut, invitationWithUrlOut } from './presenters';

export interface InvitationRouteDeps {
  db: Db;
  storeFor(conn: Db | DbTx): InvitationStore;
  eventTypes: EventTypeDirectory;
  bookingPageUrl: string;
  cursors: CursorCodec;
  secretBox: ResponseSealer;
  now(): Date;
}

const LIST_ENDPOINT = 'GET /v1/booking-invitations';

/**
 * Every POST runs through runIdempotent (decisions.md §4): the key row and the change commit together.
 * Answers that carry an invitation_url are stored sealed, so a replay returns the same URL.
 */
async function idempotentPost(
  req: Request,
  res: Response,
  deps: InvitationRouteDeps,
  opts: { sealed: boolean },
  execute: (tx: DbTx, requestId: string) => Promise<StoredResponse>,
): Promise<void> {
  const workspaceId = requireWorkspace(req);
  const ctx = requestContext(req);
  const key = parseIdempotencyKey(ctx.idempotencyKey);
  const outcome = await runIdempotent({
    db: deps.db,
    table: idempotencyKeys,
    scope: { workspaceId, apiKeyId: ctx.apiKeyId, method: 'POST', path: req.path },
    key,
    fingerprint: requestFingerprint('POST', req.path, req.body),
    requestId: ctx.requestId,
    secretBox: opts.sealed ? deps.secretBox : undefined,
    execute: (tx) => execute(tx, ctx.requestId),
  });
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  res.status(outcome.status).json(outcome.body);
}

const envelope = (data: unknown, requestId: string) => ({ data, meta: { request_id: requestId } });

/** The handlers of the five Booking Invitation operations of api-v1.md (libs/contracts V1_OPERATIONS, owner invitation). */
export function invitationHandlers(deps: InvitationRouteDeps): OperationHandlers<'invitation'> {
  return {
    async createBookingInvitation({ body }, req, res) {
      const workspaceId = requireWorkspace(req);
      await idempotentPost(req, res, deps, { sealed: true }, async (tx, requestId) => {
        const now = deps.now();
        const { invitation, url } = await manage.createInvitation({ store: deps.storeFor(tx), eventTypes: deps.eventTypes, bookingPageUrl: deps.bookingPageUrl }, workspaceId, body, now);
        return { status: 201, body: envelope(invitationWithUrlOut(invitation, url, now), requestId) };
      });
    },

    async listBookingInvitations({ query: q }, req, res) {
      const workspaceId = requireWorkspace(req);
      const filters = { status: q.status, event_type_id: q.event_type_id };
      const after = q.cursor ? fromPosition(deps.cursors.decode(LIST_ENDPOINT, filters, q.cursor)) : undefined;
      const now = deps.now();
      const page = await manage.listInvitations(
        deps.storeFor(deps.db),
        workspaceId,
        { status: q.status, eventTypeId: q.event_type_id, after, limit: q.limit ?? DEFAULT_LIST_LIMIT },
        now,
      );
      const next = page.next ? deps.cursors.encode(LIST_ENDPOINT, filters, [page.next.createdAt.toISOString(), page.next.id]) : null;
      sendData(res, 200, page.items.map((inv) => invitationOut(inv, now)), { next_cursor: next });
    },

    async getBookingInvitation({ params }, req, res) {
      const inv = await manage.getInvitation(deps.storeFor(deps.db), requireWorkspace(req), params.bookingInvitation);
      sendData(res, 200, invitationOut(inv, deps.now()));
    },

    async revokeBookingInvitation({ params }, req, res) {
      const workspaceId = requireWorkspace(req);
      await idempotentPost(req, res, deps, { sealed: false }, async (tx, requestId) => {
        const now = deps.now();
        const inv = await manage.revokeInvitation(deps.storeFor(tx), workspaceId, params.bookingInvitation, now);
        return { status: 200, body: envelope(invitationOut(inv, now), requestId) };
      });
    },

    async reissueBookingInvitation({ params }, req, res) {
      const workspaceId = requireWorkspace(req);
      await idempotentPost(req, res, deps, { sealed: true }, async (tx, requestId) => {
        const now = deps.now();
        const { invitation, url } = await manage.reissueInvitation({ store: deps.storeFor(tx), bookingPageUrl: deps.bookingPageUrl }, workspaceId, params.bookingInvitation, now);
        return { status: 200, body: envelope(invitationWithUrlOut(invitation, url, now), requestId) };
      });
    },
  };
}

/** The five Booking Invitation endpoints of api-v1.md, behind the gateway (x-workspace-id). */
export function registerInvitationRoutes(http: HttpApp, deps: InvitationRouteDeps): void {
  registerOperations(http, 'invitation', invitationHandlers(deps));
}

/** A verified cursor's position; its shape was made by this service, so a mismatch is a bad cursor. */
function fromPosition(value: unknown): ListPosition {
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
    const createdAt = new Date(value[0]);
    if (!Number.isNaN(createdAt.getTime())) return { createdAt, id: value[1] };
  }
  throw new DomainError('invalid_request', { details: [{ field: 'cursor', issue: 'invalid_format' }] });
}
