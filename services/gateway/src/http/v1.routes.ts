import { V1_OPERATIONS, V1_OWNERS, type V1Owner } from '@sched/contracts';
import type { FastRoute, FastStep, ForwardClient, HttpApp, HttpMethod } from '@sched/http';
import type { Upstream } from '../domain/route-table';
import { scopeCheck } from './api-key-auth.middleware';
import { forwardTo } from './forward';

/** One method of one v1 path: its scope check (403) and the forwarding to the owning service. */
export interface V1Route {
  method: HttpMethod;
  pattern: string;
  scopeCheck: FastStep;
  forward: FastStep;
}

/**
 * Every v1 operation of libs/contracts V1_OPERATIONS (api-v1.md), in table order: the scope it needs
 * and the service that owns it, where the request is forwarded. No table of its own: a new operation
 * in contracts is routed here as it is.
 */
export function v1Routes(upstreams: Record<Upstream, ForwardClient>): V1Route[] {
  const forwards = Object.fromEntries(V1_OWNERS.map((owner) => [owner, forwardTo(upstreams[owner])])) as Record<V1Owner, FastStep>;
  return V1_OPERATIONS.map((op) => ({ method: op.method, pattern: op.path, scopeCheck: scopeCheck(op.scope), forward: forwards[op.owner] }));
}

/** Scope check (403) before the body is read, then the owning service answers. */
export function registerV1Routes(http: HttpApp, routes: V1Route[]): void {
  for (const route of routes) http.route(route.method, route.pattern, { before: [route.scopeCheck] }, route.forward);
}

/**
 * The GET routes for the fast path (v1-fast-path.ts), with the handlers http.route gives them: scope
 * check, then forwarding. The body parser and the input guard are left out: the fast path takes only
 * requests without a body and with nothing in path or query for the guard to refuse.
 */
export function v1FastRoutes(routes: V1Route[]): FastRoute[] {
  return routes.filter((r) => r.method === 'GET').map((r) => ({ pattern: r.pattern, steps: [r.scopeCheck, r.forward] }));
}
