import type { Request } from 'express';
import { z } from 'zod';
import { guestInputSchema, listSlotsQuerySchema, timestampInputSchema } from '@sched/contracts';
import { parseBody, parseParams, parseQuery, sendData, type HttpApp } from '@sched/http';
import * as page from '../domain/booking-page';
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

/**
 * The booking page's backend, called only by the gateway (never routed from /v1): for invitations the
 * credential is the key, for public Event Types the workspace the gateway resolved from its slug.
 */
export function registerPageRoutes(http: HttpApp, deps: page.PageDeps & { now(): Date }): void {
  http.route('GET', '/internal/v1/page/invitation', async (req, res) => {
    sendData(res, 200, invitationPageOut(await page.openInvitation(deps, credentialOf(req), deps.now())));
  });

  http.route('GET', '/internal/v1/page/invitation/slots', async (req, res) => {
    const q = parseQuery(listSlotsQuerySchema, req);
    sendData(res, 200, slotsOut(await page.invitationSlots(deps, credentialOf(req), q, deps.now()), q));
  });

  http.route('POST', '/internal/v1/page/invitation/bookings', async (req, res) => {
    const body = parseBody(pageBookingBodySchema, req);
    sendData(res, 201, await page.bookWithInvitation(deps, credentialOf(req), body, deps.now()));
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
    sendData(res, 201, await page.bookPublic(deps, ws, slug, body));
  });
}
