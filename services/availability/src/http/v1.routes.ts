import { z } from 'zod';
import { combineEventTypesListParams, DomainError, listEventTypesBodySchema, listEventTypesQuerySchema, listSlotsQuerySchema } from '@sched/contracts';
import { parseBody, parseQuery, requireWorkspace, sendData, sendDataJson, type HttpApp } from '@sched/http';
import { listSlotsJson } from '../domain/find-slots';
import * as eventTypes from '../domain/manage-event-types';
import { nextCursor, noBodySchema, pageOf, type RouteDeps } from './deps';
import { eventTypeOut } from './presenters';

const LIST = 'v1:event-types';
const noQuery = z.strictObject({});

/** The public v1 endpoints this service owns (api-v1.md), behind the gateway's auth and scopes. */
export function registerV1Routes(http: HttpApp, deps: RouteDeps): void {
  http.route('GET', '/v1/event-types', async (req, res) => {
    const ws = requireWorkspace(req);
    const query = parseQuery(listEventTypesQuerySchema, req);
    const body = req.body === undefined ? undefined : parseBody(listEventTypesBodySchema, req);
    const combined = combineEventTypesListParams(query, body);
    if (!combined.ok) throw new DomainError('invalid_request', { details: combined.details });
    const page = await eventTypes.listEventTypes(deps.eventTypes, ws, pageOf(deps.cursors, LIST, ws, combined.value));
    sendData(res, 200, page.items.map(eventTypeOut), { next_cursor: nextCursor(deps.cursors, LIST, ws, page.next) });
  });

  http.route('GET', '/v1/event-types/:eventType', async (req, res) => {
    const ws = requireWorkspace(req);
    parseQuery(noQuery, req);
    parseBody(noBodySchema, req);
    sendData(res, 200, eventTypeOut(await eventTypes.getEventType(deps.eventTypes, ws, String(req.params.eventType))));
  });

  http.route('GET', '/v1/event-types/:eventType/slots', async (req, res) => {
    const ws = requireWorkspace(req);
    const query = parseQuery(listSlotsQuerySchema, req);
    parseBody(noBodySchema, req);
    sendDataJson(res, 200, await listSlotsJson(deps.slotsCache, deps.slots, ws, String(req.params.eventType), query, deps.now()));
  });
}
