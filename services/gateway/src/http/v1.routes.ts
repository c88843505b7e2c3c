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

/**
 * Scope check (403) before the body is read, then the owning service answers. Answers the routes for
 * the fast path (v1-fast-path.ts), in registration order, with the handlers the router runs for them:
 * a POST's whole list (scope check, body parser, input guard, forwarding); a GET's scope check and
 * forwarding (the fast path takes only GETs without a body, for which the body parser and the input
 * guard have nothing to do).
 */
export function registerV1Routes(http: HttpApp, routes: V1Route[]): FastRoute[] {
  return routes.map((route) => {
    const registered = http.route(route.method, route.pattern, { before: [route.scopeCheck] }, route.forward);
    const steps = route.method === 'GET' ? [route.scopeCheck, route.forward] : registered;
    return { method: route.method, pattern: route.pattern, steps };
  });
}
