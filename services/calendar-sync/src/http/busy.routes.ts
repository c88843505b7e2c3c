import { busyQuerySchema, DomainError, MS_PER_DAY } from '@sched/contracts';
import { parseQuery, sendData, type HttpApp } from '@sched/http';
import type { BusyReader } from '../domain/busy-reader';
import { pathId } from './path-params';

/** Longest window one busy query may ask for (slots ask for at most 62 dates plus buffers). */
export const MAX_BUSY_WINDOW_DAYS = 100;

/**
 * Internal (not routed by the gateway): GET /internal/v1/workspaces/{ws}/hosts/{host}/busy?from=&to=
 * for availability. 404 no connection; 503 calendar_unavailable + Retry-After when failing closed.
 */
export function registerBusyRoutes(http: HttpApp, reader: BusyReader, now: () => Date = () => new Date()): void {
  http.route('GET', '/internal/v1/workspaces/:ws/hosts/:host/busy', async (req, res) => {
    const ws = pathId(req, 'ws', 'wsp');
    const host = pathId(req, 'host', 'hst');
    const { from, to } = parseQuery(busyQuerySchema, req);
    if (to.getTime() <= from.getTime() || to.getTime() - from.getTime() > MAX_BUSY_WINDOW_DAYS * MS_PER_DAY) {
      throw new DomainError('invalid_request', { details: [{ field: 'to', issue: 'out_of_range' }] });
    }
    sendData(res, 200, await reader.busy({ workspaceId: ws, hostId: host, window: { start: from, end: to }, now: now() }));
  });
}
