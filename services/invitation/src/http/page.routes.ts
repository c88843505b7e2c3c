import type { Request, Response } from 'express';
import { z } from 'zod';
import { guestInputSchema, isDomainError, listSlotsQuerySchema, timestampInputSchema } from '@sched/contracts';
import type { Db } from '@sched/db';
import { parseBody, parseParams, parseQuery, requestContext, sendData, type HttpApp } from '@sched/http';
import {
  defaultStorableError,
  findLiveAnswer,
  idempotencyRowIdentity,
  parseIdempotencyKey,
  replayFoundRow,
  requestFingerprint,
  runIdempotent,
  type IdempotentOutcome,
  type StoredResponse,
} from '@sched/idempotency';
import * as page from '../domain/booking-page';
import type { PageBooking } from '../domain/ports';
import { idempotencyKeys } from '../store/schema';
import { invitationPageOut, publicPageOut, slotsOut } from './presenters';

/** Header the gateway forwards the page's credential in: never a URL, so never an access log or a Referer. */
export const CREDENTIAL_HEADER = 'x-invitation-credential';

/** Body of a page booking: the slot and the guest. No metadata: that belongs to API callers. */
export const pageBookingBodySchema = z.strictObject({ start_at: timestampInputSchema, guest: guestInputSchema });

const publicParams = z.object({ ws: z.string(), slug: z.string() });

function credentialOf(req: Request): string {
  const v = req.headers[CREDENTIAL_HEADER];
  return typeof v === 'string' ? v : '';
}

export type PageRouteDeps = page.PageDeps & { db: Db; now(): Date };

/** An error that says "try again" (Retry-After: a use held by a booking in flight, a key in progress at booking) is not the key's answer. */
function storablePageError(err: unknown, requestId: string): StoredResponse | undefined {
  if (isDomainError(err) && err.retryAfterSeconds !== undefined) return undefined;
  return defaultStorableError(err, requestId);
}

/**
 * The store step is a short transaction; a concurrent run of the same key storing its answer at this very
 * moment holds the key's lock for a few milliseconds: wait for it rather than answer 409 after booking.
 */
async function storeWaitingBriefly(store: () => Promise<IdempotentOutcome>): Promise<IdempotentOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store();
    } catch (err) {
      if (!(isDomainError(err) && err.code === 'idempotency_request_in_progress') || attempt >= 10) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

/**
 * A page booking under the page's per-form token (its Idempotency-Key; docs/booking-page.md). The key is
 * scoped to who may book here (`owner`: the invitation, or the public page's workspace and path), so two
 * visitors never share answers. A finished answer under the key is replayed (`Idempotent-Replayed`;
 * another body → 422 idempotency_key_reused) before the saga touches anything, so a double submit
 * reserves no second use. Otherwise the saga runs with booking's key derived from this one: booking's own
 * idempotency (its key row commits with the Booking) keeps even two concurrent runs to one Booking, and
 * a run retried after a lost answer gets booking's replay. Then the answer is stored under the key (2xx
 * and 4xx; not 5xx, 429 or a Retry-After "try again"). No transaction is held across the booking call.
 */
async function idempotentPageBooking(
  req: Request,
  res: Response,
  deps: PageRouteDeps,
  owner: { workspaceId: string; caller: string },
  key: string,
  book: (bookingKey: string) => Promise<PageBooking>,
): Promise<void> {
  const { requestId } = requestContext(req);
  const scope = { workspaceId: owner.workspaceId, apiKeyId: owner.caller, method: 'POST', path: req.path };
  const fingerprint = requestFingerprint('POST', req.path, req.body);
  const { id } = idempotencyRowIdentity(idempotencyKeys, scope, key);
  const found = await findLiveAnswer(deps.db, idempotencyKeys, owner.workspaceId, id);
  let outcome: IdempotentOutcome;
  if (found) {
    outcome = replayFoundRow(found, { id, fingerprint, requestId });
  } else {
    let answer: StoredResponse | undefined;
    let failure: unknown;
    try {
      answer = { status: 201, body: { data: await book(`page_${id}`), meta: { request_id: requestId } } };
    } catch (err) {
      failure = err;
    }
    // Stores the answer under the key, or replays the one a concurrent run of the same key stored first.
    const store = () =>
      runIdempotent({
        db: deps.db,
        table: idempotencyKeys,
        scope,
        key,
        fingerprint,
        requestId,
        savepoint: false,
        storableError: storablePageError,
        execute: async () => {
          if (answer) return answer;
          throw failure;
        },
      });
    outcome = await storeWaitingBriefly(store);
  }
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  res.status(outcome.status).json(outcome.body);
}

/**
 * The booking page's backend, called only by the gateway (never routed from /v1): for invitations the
 * credential is the key, for public Event Types the workspace the gateway resolved from its slug.
 * Booking POSTs with an Idempotency-Key (the page's per-form token) go through idempotentPageBooking.
 */
export function registerPageRoutes(http: HttpApp, deps: PageRouteDeps): void {
  http.route('GET', '/internal/v1/page/invitation', async (req, res) => {
    sendData(res, 200, invitationPageOut(await page.openInvitation(deps, credentialOf(req), deps.now())));
  });

  http.route('GET', '/internal/v1/page/invitation/slots', async (req, res) => {
    const q = parseQuery(listSlotsQuerySchema, req);
    sendData(res, 200, slotsOut(await page.invitationSlots(deps, credentialOf(req), q, deps.now()), q));
  });

  http.route('POST', '/internal/v1/page/invitation/bookings', async (req, res) => {
    const body = parseBody(pageBookingBodySchema, req);
    const credential = credentialOf(req);
    const key = parseIdempotencyKey(requestContext(req).idempotencyKey);
    if (key === undefined) return sendData(res, 201, await page.bookWithInvitation(deps, credential, body, deps.now()));
    const invitation = await page.invitationByCredential(deps, credential);
    const owner = { workspaceId: invitation.workspaceId, caller: `booking_page:invitation:${invitation.id}` };
    await idempotentPageBooking(req, res, deps, owner, key, (bookingKey) => page.bookWithInvitation(deps, credential, body, deps.now(), bookingKey));
  });

  http.route('GET', '/internal/v1/workspaces/:ws/page/event-types/:slug', async (req, res) => {
    const { ws, slug } = parseParams(publicParams, req);
    sendData(res, 200, publicPageOut(await page.openPublicEventType(deps, ws, slug)));
  });

  http.route('GET', '/internal/v1/workspaces/:ws/page/event-types/:slug/slots', async (req, res) => {
    const { ws, slug } = parseParams(publicParams, req);
    const q = parseQuery(listSlotsQuerySchema, req);
    sendData(res, 200, slotsOut(await page.publicSlots(deps, ws, slug, q), q));
  });

  http.route('POST', '/internal/v1/workspaces/:ws/page/event-types/:slug/bookings', async (req, res) => {
    const { ws, slug } = parseParams(publicParams, req);
    const body = parseBody(pageBookingBodySchema, req);
    const key = parseIdempotencyKey(requestContext(req).idempotencyKey);
    if (key === undefined) return sendData(res, 201, await page.bookPublic(deps, ws, slug, body));
    // The path names the workspace and the Event Type: the scope is that public page.
    await idempotentPageBooking(req, res, deps, { workspaceId: ws, caller: 'booking_page:public' }, key, (bookingKey) => page.bookPublic(deps, ws, slug, body, bookingKey));
  });
}
