import type { FastRoute, FastStep, ForwardClient, HttpApp, HttpMethod } from '@sched/http';
import { V1_ROUTES, type Upstream } from '../domain/route-table';
import { scopeCheck } from './api-key-auth.middleware';
import { forwardTo } from './forward';

/** One method of one v1 path: its scope check (403) and the forwarding to the owning service. */
export interface V1Route {
  method: HttpMethod;
  pattern: string;
  scopeCheck: FastStep;
  forward: FastStep;
}

/** Every v1 path of api-v1.md with the scope each method needs (route-table.ts), in registration order. */
export function v1Routes(upstreams: Record<Upstream, ForwardClient>): V1Route[] {
  const out: V1Route[] = [];
  for (const route of V1_ROUTES) {
    const forward = forwardTo(upstreams[route.upstream]);
    for (const [method, scope] of Object.entries(route.methods)) {
      out.push({ method: method as HttpMethod, pattern: route.pattern, scopeCheck: scopeCheck(scope), forward });
    }
  }
  return out;
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
