import { z } from 'zod';
import { createWebhookEndpointBodySchema, patchWebhookEndpointBodySchema } from '@sched/contracts';
import { NO_BODY, NO_QUERY, parseBody, parseParams, parseQuery, sendData, type HttpApp } from '@sched/http';
import * as endpoints from '../domain/webhook-endpoints';
import { endpointOut } from './presenters';
import { scopedWorkspace } from './workspace-scope';

const BASE = '/admin/v1/workspaces/:ws/webhook-endpoints';
const endpointParams = z.object({ ws: z.string(), whe: z.string() });

/** Webhook endpoints of a workspace (decisions.md §13), forwarded by the gateway with x-workspace-id. */
export function registerWebhookEndpointRoutes(http: HttpApp, deps: endpoints.EndpointDeps): void {
  http.route('POST', BASE, async (req, res) => {
    const ws = scopedWorkspace(req);
    const body = parseBody(createWebhookEndpointBodySchema, req);
    const { endpoint, secret } = await endpoints.createEndpoint(deps, ws, body);
    sendData(res, 201, { ...endpointOut(endpoint), secret });
  });

  http.route('GET', BASE, async (req, res) => {
    const ws = scopedWorkspace(req);
    parseQuery(NO_QUERY, req);
    sendData(res, 200, (await endpoints.listEndpoints(deps, ws)).map(endpointOut));
  });

  http.route('GET', `${BASE}/:whe`, async (req, res) => {
    const ws = scopedWorkspace(req);
    parseQuery(NO_QUERY, req);
    const { whe } = parseParams(endpointParams, req);
    sendData(res, 200, endpointOut(await endpoints.getEndpoint(deps, ws, whe)));
  });

  http.route('PATCH', `${BASE}/:whe`, async (req, res) => {
    const ws = scopedWorkspace(req);
    const { whe } = parseParams(endpointParams, req);
    const body = parseBody(patchWebhookEndpointBodySchema, req);
    sendData(res, 200, endpointOut(await endpoints.updateEndpoint(deps, ws, whe, body)));
  });

  http.route('DELETE', `${BASE}/:whe`, async (req, res) => {
    const ws = scopedWorkspace(req);
    const { whe } = parseParams(endpointParams, req);
    await endpoints.deleteEndpoint(deps, ws, whe);
    res.status(204).end();
  });

  http.route('POST', `${BASE}/:whe/rotate-secret`, async (req, res) => {
    const ws = scopedWorkspace(req);
    const { whe } = parseParams(endpointParams, req);
    parseBody(NO_BODY, req);
    const { endpoint, secret } = await endpoints.rotateEndpointSecret(deps, ws, whe);
    sendData(res, 200, { ...endpointOut(endpoint), secret });
  });
}
