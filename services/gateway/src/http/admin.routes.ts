import type { RequestHandler } from 'express';
import { z } from 'zod';
import { createApiKeyBodySchema, createWorkspaceBodySchema, toTimestamp } from '@sched/contracts';
import { parseBody, parseParams, sendData, type ForwardClient, type HttpApp } from '@sched/http';
import * as admin from '../domain/workspace-admin';
import type { ApiKey, Workspace } from '../domain/workspace-admin';
import { ADMIN_FORWARDED_ROUTES, type Upstream } from '../domain/route-table';
import { forwardTo } from './forward';

const wsParams = z.object({ ws: z.string() });
const keyParams = z.object({ ws: z.string(), key: z.string() });

const workspaceOut = (w: Workspace) => ({ id: w.id, name: w.name, slug: w.slug, mode: w.mode, created_at: toTimestamp(w.createdAt) });
const apiKeyOut = (k: ApiKey) => ({
  id: k.id,
  workspace_id: k.workspaceId,
  name: k.name,
  key_hint: k.keyHint,
  scopes: k.scopes,
  rate_limit: k.rateLimit && k.rateWindowSeconds ? { limit: k.rateLimit, window_seconds: k.rateWindowSeconds } : null,
  expires_at: k.expiresAt ? toTimestamp(k.expiresAt) : null,
  revoked_at: k.revokedAt ? toTimestamp(k.revokedAt) : null,
  created_at: toTimestamp(k.createdAt),
});

/** decisions.md §13: workspaces and keys are the gateway's own; the other admin paths go to their owners. */
export function registerAdminRoutes(http: HttpApp, deps: { store: admin.AdminStore; upstreams: Record<Upstream, ForwardClient> }): void {
  const { store } = deps;

  http.route('POST', '/admin/v1/workspaces', async (req, res) => {
    const body = parseBody(createWorkspaceBodySchema, req);
    sendData(res, 201, workspaceOut(await admin.createWorkspace(store, body)));
  });

  http.route('GET', '/admin/v1/workspaces/:ws', async (req, res) => {
    const { ws } = parseParams(wsParams, req);
    sendData(res, 200, workspaceOut(await admin.getWorkspace(store, ws)));
  });

  http.route('POST', '/admin/v1/workspaces/:ws/api-keys', async (req, res) => {
    const { ws } = parseParams(wsParams, req);
    const body = parseBody(createApiKeyBodySchema, req);
    const { apiKey, key } = await admin.createApiKey(store, ws, body, new Date());
    sendData(res, 201, { ...apiKeyOut(apiKey), key });
  });

  http.route('GET', '/admin/v1/workspaces/:ws/api-keys', async (req, res) => {
    const { ws } = parseParams(wsParams, req);
    sendData(res, 200, (await admin.listApiKeys(store, ws)).map(apiKeyOut));
  });

  http.route('POST', '/admin/v1/workspaces/:ws/api-keys/:key/revoke', async (req, res) => {
    const { ws, key } = parseParams(keyParams, req);
    sendData(res, 200, apiKeyOut(await admin.revokeApiKey(store, ws, key, new Date())));
  });

  // Forwarded paths: the workspace must exist here (404 otherwise) and is handed on as x-workspace-id.
  const workspaceExists: RequestHandler = async (req, _res, next) => {
    try {
      await admin.getWorkspace(store, String(req.params.ws));
      next();
    } catch (err) {
      next(err);
    }
  };

  for (const route of ADMIN_FORWARDED_ROUTES) {
    const scoped = route.pattern.includes(':ws');
    for (const method of Object.keys(route.methods) as Array<keyof typeof route.methods>) {
      const handlers = scoped ? [workspaceExists, forwardTo(deps.upstreams[route.upstream], { workspaceParam: 'ws' })] : [forwardTo(deps.upstreams[route.upstream])];
      http.route(method, route.pattern, ...handlers);
    }
  }
}
