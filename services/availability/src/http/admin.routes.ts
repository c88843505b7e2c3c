import { createEventTypeBodySchema, createHostBodySchema, patchEventTypeBodySchema, patchHostBodySchema, putScheduleBodySchema } from '@sched/contracts';
import { NO_BODY, parseBody, parseQuery, sendData, type HttpApp } from '@sched/http';
import * as eventTypes from '../domain/manage-event-types';
import * as hosts from '../domain/manage-hosts';
import { adminListQuerySchema, adminWorkspace, nextCursor, pageOf, type RouteDeps } from './deps';
import { adminEventTypeOut, hostOut, scheduleOut } from './presenters';

const HOSTS_LIST = 'admin:hosts';
const EVENT_TYPES_LIST = 'admin:event-types';

/** decisions.md §13: hosts, schedules and Event Types, forwarded here by the gateway. */
export function registerAdminRoutes(http: HttpApp, deps: RouteDeps): void {
  const base = '/admin/v1/workspaces/:ws';

  http.route('POST', `${base}/hosts`, async (req, res) => {
    const ws = adminWorkspace(req);
    const body = parseBody(createHostBodySchema, req);
    sendData(res, 201, hostOut(await hosts.createHost(deps.hosts, ws, body)));
  });

  http.route('GET', `${base}/hosts`, async (req, res) => {
    const ws = adminWorkspace(req);
    const query = parseQuery(adminListQuerySchema, req);
    parseBody(NO_BODY, req);
    const page = await hosts.listHosts(deps.hosts, ws, pageOf(deps.cursors, HOSTS_LIST, ws, query));
    sendData(res, 200, page.items.map(hostOut), { next_cursor: nextCursor(deps.cursors, HOSTS_LIST, ws, page.next) });
  });

  http.route('GET', `${base}/hosts/:host`, async (req, res) => {
    const ws = adminWorkspace(req);
    sendData(res, 200, hostOut(await hosts.getHost(deps.hosts, ws, String(req.params.host))));
  });

  http.route('PATCH', `${base}/hosts/:host`, async (req, res) => {
    const ws = adminWorkspace(req);
    const body = parseBody(patchHostBodySchema, req);
    sendData(res, 200, hostOut(await hosts.patchHost(deps.hosts, ws, String(req.params.host), body)));
  });

  http.route('GET', `${base}/hosts/:host/schedule`, async (req, res) => {
    const ws = adminWorkspace(req);
    sendData(res, 200, scheduleOut(await hosts.getSchedule(deps.hosts, ws, String(req.params.host))));
  });

  http.route('PUT', `${base}/hosts/:host/schedule`, async (req, res) => {
    const ws = adminWorkspace(req);
    const body = parseBody(putScheduleBodySchema, req);
    sendData(res, 200, scheduleOut(await hosts.putSchedule(deps.hosts, ws, String(req.params.host), body)));
  });

  http.route('POST', `${base}/event-types`, async (req, res) => {
    const ws = adminWorkspace(req);
    const body = parseBody(createEventTypeBodySchema, req);
    sendData(res, 201, adminEventTypeOut(await eventTypes.createEventType(deps.eventTypes, ws, body)));
  });

  http.route('GET', `${base}/event-types`, async (req, res) => {
    const ws = adminWorkspace(req);
    const query = parseQuery(adminListQuerySchema, req);
    parseBody(NO_BODY, req);
    const page = await eventTypes.listEventTypes(deps.eventTypes, ws, pageOf(deps.cursors, EVENT_TYPES_LIST, ws, query));
    sendData(res, 200, page.items.map(adminEventTypeOut), { next_cursor: nextCursor(deps.cursors, EVENT_TYPES_LIST, ws, page.next) });
  });

  http.route('GET', `${base}/event-types/:evt`, async (req, res) => {
    const ws = adminWorkspace(req);
    sendData(res, 200, adminEventTypeOut(await eventTypes.getEventType(deps.eventTypes, ws, String(req.params.evt))));
  });

  http.route('PATCH', `${base}/event-types/:evt`, async (req, res) => {
    const ws = adminWorkspace(req);
    const body = parseBody(patchEventTypeBodySchema, req);
    sendData(res, 200, adminEventTypeOut(await eventTypes.patchEventType(deps.eventTypes, ws, String(req.params.evt), body)));
  });
}
