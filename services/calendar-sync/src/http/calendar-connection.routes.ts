import { putCalendarConnectionBodySchema, toTimestamp, type CalendarConnection } from '@sched/contracts';
import { parseBody, sendData, type HttpApp } from '@sched/http';
import { connectCalendar, disconnectCalendar, getConnection, type ConnectionDeps } from '../domain/calendar-connections';
import type { Connection } from '../domain/ports';
import { pathId, pathWorkspace } from './path-params';

/** The admin view of a connection: never the password, sealed or not. */
function connectionOut(c: Connection): CalendarConnection {
  return {
    id: c.id,
    host_id: c.hostId,
    provider: c.provider,
    url: c.url,
    username: c.username,
    calendar_url: c.calendarUrl,
    status: c.status,
    error_code: c.errorCode,
    created_at: toTimestamp(c.createdAt),
    updated_at: toTimestamp(c.updatedAt),
  };
}

const PATH = '/admin/v1/workspaces/:ws/hosts/:host/calendar';

/** decisions.md §13: PUT/GET/DELETE of a host's calendar connection (forwarded by the gateway). */
export function registerCalendarConnectionRoutes(http: HttpApp, deps: ConnectionDeps): void {
  http.route('PUT', PATH, async (req, res) => {
    const ws = pathWorkspace(req);
    const host = pathId(req, 'host', 'hst');
    const body = parseBody(putCalendarConnectionBodySchema, req);
    const { connection, created } = await connectCalendar(deps, { workspaceId: ws, hostId: host, body });
    sendData(res, created ? 201 : 200, connectionOut(connection));
  });

  http.route('GET', PATH, async (req, res) => {
    const ws = pathWorkspace(req);
    const host = pathId(req, 'host', 'hst');
    sendData(res, 200, connectionOut(await getConnection(deps.store, ws, host)));
  });

  http.route('DELETE', PATH, async (req, res) => {
    const ws = pathWorkspace(req);
    const host = pathId(req, 'host', 'hst');
    await disconnectCalendar(deps, ws, host);
    res.status(204).end();
  });
}
