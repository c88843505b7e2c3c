import { combineEventTypesListParams, DomainError, listSlotsQuerySchema, type ListSlotsQuery } from '@sched/contracts';
import { parseQuery, registerOperations, requireWorkspace, sendData, sendDataJson, type FastRequest, type HttpApp, type OperationHandlers } from '@sched/http';
import { cachedSlotsJson, listSlotsJson } from '../domain/find-slots';
import * as eventTypes from '../domain/manage-event-types';
import { nextCursor, pageOf, type RouteDeps } from './deps';
import { eventTypeOut } from './presenters';

const LIST = 'v1:event-types';

/** The handlers of the public v1 operations this service owns (libs/contracts V1_OPERATIONS, owner availability). */
export function v1Handlers(deps: RouteDeps): OperationHandlers<'availability'> {
  return {
    async listEventTypes({ query, body }, req, res) {
      const ws = requireWorkspace(req);
      const combined = combineEventTypesListParams(query, body);
      if (!combined.ok) throw new DomainError('invalid_request', { details: combined.details });
      const page = await eventTypes.listEventTypes(deps.eventTypes, ws, pageOf(deps.cursors, LIST, ws, combined.value));
      sendData(res, 200, page.items.map(eventTypeOut), { next_cursor: nextCursor(deps.cursors, LIST, ws, page.next) });
    },

    async getEventType({ params }, req, res) {
      sendData(res, 200, eventTypeOut(await eventTypes.getEventType(deps.eventTypes, requireWorkspace(req), params.eventType)));
    },

    // Not async: a cache hit (the usual answer) is sent at once, without a promise; a miss computes
    // (or joins a computation) and the promise goes to the router or the fast path as it is.
    listSlots({ params, query }, req, res) {
      const ws = requireWorkspace(req);
      const now = deps.now();
      const hit = cachedSlotsJson(deps.slotsCache, ws, params.eventType, query, now);
      if (hit !== undefined) return sendDataJson(res, 200, hit);
      return listSlotsJson(deps.slotsCache, deps.slots, ws, params.eventType, query, now).then((json) => sendDataJson(res, 200, json));
    },
  };
}

/** The public v1 endpoints this service owns (api-v1.md), behind the gateway's auth and scopes. */
export function registerV1Routes(http: HttpApp, deps: RouteDeps): void {
  const queries = new SlotsQueries(1000);
  // Slots is the hot path: its plain GETs are answered before express by the route's own steps (libs/http
  // fast-path.ts; docs/availability.md, "Fast path"), and its queries are parsed once per distinct query
  // string. Its handler uses node's request and response only.
  registerOperations(http, 'availability', v1Handlers(deps), { fast: ['listSlots'], parseQuery: { listSlots: (req) => queries.of(req) } });
}

/**
 * The valid Slots queries seen last, by their raw query string: the same few windows are asked for
 * over and over, and validating one (zod, dates, the timezone) costs more than answering it from the
 * cache. Invalid queries are not kept; they are parsed (and refused) each time.
 */
class SlotsQueries {
  private readonly parsed = new Map<string, Readonly<ListSlotsQuery>>();

  constructor(private readonly maxEntries: number) {}

  of(req: FastRequest): ListSlotsQuery {
    const url = req.originalUrl ?? req.url ?? '';
    const q = url.indexOf('?');
    const raw = q < 0 ? '' : url.slice(q + 1);
    const hit = this.parsed.get(raw);
    if (hit) return hit;
    const query = parseQuery(listSlotsQuerySchema, req);
    if (this.parsed.size >= this.maxEntries) this.parsed.delete(this.parsed.keys().next().value!);
    // Shared by every request with this query string: frozen, so no handler can change it for the next.
    this.parsed.set(raw, Object.freeze({ ...query }));
    return query;
  }
}
