import { z } from 'zod';
import { DomainError, slotCheckRequestSchema, slotChecksRequestSchema, type SlotCheckItemError, type SlotCheckResponse } from '@sched/contracts';
import { parseBody, parseParams, sendData, type HttpApp } from '@sched/http';
import { checkSlot, checkSlots, type SlotCheckOutcome } from '../domain/find-slots';
import { getEventType, getEventTypeBySlug } from '../domain/manage-event-types';
import { getHost } from '../domain/manage-hosts';
import type { RouteDeps } from './deps';
import { adminEventTypeOut, internalHostOut } from './presenters';

const wsParams = z.object({ ws: z.string() });
const hostParams = z.object({ ws: z.string(), host: z.string() });
const eventTypeParams = z.object({ ws: z.string(), evt: z.string() });
const slugParams = z.object({ ws: z.string(), slug: z.string() });

/**
 * Service-to-service endpoints (contracts internal.ts). Not routed by the gateway; the workspace is
 * in the path and every query is filtered by it.
 */
export function registerInternalRoutes(http: HttpApp, deps: RouteDeps): void {
  http.route('POST', '/internal/v1/workspaces/:ws/slot-check', async (req, res) => {
    const { ws } = parseParams(wsParams, req);
    const body = parseBody(slotCheckRequestSchema, req);
    const answer = await checkSlot(deps.slots, ws, { eventTypeId: body.event_type_id, startAt: body.start_at, excludeBookingId: body.exclude_booking_id }, deps.now());
    sendData(res, 200, answer);
  });

  // Several checks in one call (contracts slotChecksRequestSchema): one answer, or one item error, per check in order.
  http.route('POST', '/internal/v1/workspaces/:ws/slot-checks', async (req, res) => {
    const { ws } = parseParams(wsParams, req);
    const { checks } = parseBody(slotChecksRequestSchema, req);
    // The credential names one request id (the first check's); this line names every check's.
    if (deps.logger.isLevelEnabled('http')) deps.logger.http('slot checks', { checks: checks.length, request_ids: checks.map((c) => c.request_id ?? null) });
    const inputs = checks.map((c) => ({ eventTypeId: c.event_type_id, startAt: c.start_at, excludeBookingId: c.exclude_booking_id }));
    sendData(res, 200, (await checkSlots(deps.slots, ws, inputs, deps.now())).map(itemOf));
  });

  http.route('GET', '/internal/v1/workspaces/:ws/hosts/:host', async (req, res) => {
    const { ws, host } = parseParams(hostParams, req);
    sendData(res, 200, internalHostOut(await getHost(deps.hosts, ws, host)));
  });

  // The invitation service and the booking page need `access`, which the v1 Event Type does not show.
  http.route('GET', '/internal/v1/workspaces/:ws/event-types/by-slug/:slug', async (req, res) => {
    const { ws, slug } = parseParams(slugParams, req);
    sendData(res, 200, adminEventTypeOut(await getEventTypeBySlug(deps.eventTypes, ws, slug)));
  });

  http.route('GET', '/internal/v1/workspaces/:ws/event-types/:evt', async (req, res) => {
    const { ws, evt } = parseParams(eventTypeParams, req);
    sendData(res, 200, adminEventTypeOut(await getEventType(deps.eventTypes, ws, evt)));
  });
}

/** A check's entry in the slot-checks answer: its answer, or its calendar_unavailable as an item error. */
function itemOf(outcome: SlotCheckOutcome): SlotCheckResponse | SlotCheckItemError {
  if (!(outcome instanceof DomainError)) return outcome;
  return { error: { code: 'calendar_unavailable', message: outcome.message, retry_after_seconds: Math.max(1, Math.ceil(outcome.retryAfterSeconds ?? 1)) } };
}
