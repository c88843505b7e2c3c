import { z } from 'zod';
import {
  combineEventTypesListParams,
  DomainError,
  listEventTypesBodySchema,
  listEventTypesQuerySchema,
  listSlotsQuerySchema,
  type ListSlotsQuery,
} from '@sched/contracts';
import { parseBody, parseQuery, requireWorkspace, sendData, sendDataJson, type FastRequest, type FastStep, type HttpApp } from '@sched/http';
import { listSlotsJson } from '../domain/find-slots';
import * as eventTypes from '../domain/manage-event-types';
import { nextCursor, noBodySchema, pageOf, type RouteDeps } from './deps';
import { eventTypeOut } from './presenters';

const LIST = 'v1:event-types';
const noQuery = z.strictObject({});
const SLOTS = '/v1/event-types/:eventType/slots';

/** The public v1 endpoints this service owns (api-v1.md), behind the gateway's auth and scopes. */
export function registerV1Routes(http: HttpApp, deps: RouteDeps): void {
  const queries = new SlotsQueries(1000);
  // On node's request and response only: the fast path and the router both run it.
  const slots: FastStep = async (req, res) => {
    const ws = requireWorkspace(req);
    const query = queries.of(req);
    parseBody(noBodySchema, req);
    sendDataJson(res, 200, await listSlotsJson(deps.slotsCache, deps.slots, ws, String(req.params.eventType), query, deps.now()));
  };
  // Slots is the hot path: its plain GETs are answered before express, by the route's own steps
  // (libs/http fast-path.ts; docs/availability.md, "Fast path"). No route matches its paths before it.
  http.fastPath({ routes: [{ pattern: SLOTS, steps: [...http.guard('GET', SLOTS), slots] }] });

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

  http.route('GET', SLOTS, slots);
}

/**
 * The valid Slots queries seen last, by their raw query string: the same few windows are asked for
 * over and over, and validating one (zod, dates, the timezone) costs more than answering it from the
 * cache. Invalid queries are not kept; they are parsed (and refused) each time.
 */
class SlotsQueries {
  private readonly parsed = new Map<string, ListSlotsQuery>();

  constructor(private readonly maxEntries: number) {}

  of(req: FastRequest): ListSlotsQuery {
    const url = req.originalUrl ?? req.url!;
    const q = url.indexOf('?');
    const raw = q < 0 ? '' : url.slice(q + 1);
    const hit = this.parsed.get(raw);
    if (hit) return { ...hit };
    const query = parseQuery(listSlotsQuerySchema, req);
    if (this.parsed.size >= this.maxEntries) this.parsed.delete(this.parsed.keys().next().value!);
    this.parsed.set(raw, { ...query });
    return query;
  }
}
