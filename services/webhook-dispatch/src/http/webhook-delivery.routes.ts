import { z } from 'zod';
import { listWebhookDeliveriesQuerySchema, replayWebhookDeliveriesBodySchema } from '@sched/contracts';
import { NO_BODY, parseBody, parseParams, sendData, parseQuery, type HttpApp } from '@sched/http';
import * as deliveries from '../domain/webhook-deliveries';
import { deliveryOut } from './presenters';
import { scopedWorkspace } from './workspace-scope';

const deliveryParams = z.object({ id: z.string() });

/** Delivery records and on-call recovery (decisions.md §13). Replays answer 202: the worker sends them next. */
export function registerWebhookDeliveryRoutes(http: HttpApp, deps: deliveries.DeliveryDeps): void {
  http.route('GET', '/admin/v1/workspaces/:ws/webhook-deliveries', async (req, res) => {
    const ws = scopedWorkspace(req);
    const query = parseQuery(listWebhookDeliveriesQuerySchema, req);
    const page = await deliveries.listDeliveries(deps, ws, query);
    sendData(res, 200, page.items.map(deliveryOut), { next_cursor: page.nextCursor });
  });

  http.route('POST', '/admin/v1/workspaces/:ws/webhook-deliveries/replay', async (req, res) => {
    const ws = scopedWorkspace(req);
    const body = parseBody(replayWebhookDeliveriesBodySchema, req);
    sendData(res, 202, await deliveries.replayFailedInRange(deps, ws, body));
  });

  // Operator-wide: the path names no workspace (the gateway forwards it without x-workspace-id).
  http.route('POST', '/admin/v1/webhook-deliveries/:id/replay', async (req, res) => {
    const { id } = parseParams(deliveryParams, req);
    parseBody(NO_BODY, req);
    sendData(res, 202, await deliveries.replayDelivery(deps, id));
  });
}
