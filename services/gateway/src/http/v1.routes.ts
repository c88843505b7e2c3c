import type { ForwardClient, HttpApp } from '@sched/http';
import { V1_ROUTES, type Upstream } from '../domain/route-table';
import { scopeCheck } from './api-key-auth.middleware';
import { forwardTo } from './forward';

/** Every v1 path of api-v1.md: scope check (403) before the body is read, then the owning service answers. */
export function registerV1Routes(http: HttpApp, upstreams: Record<Upstream, ForwardClient>): void {
  for (const route of V1_ROUTES) {
    for (const [method, scope] of Object.entries(route.methods)) {
      http.route(method as keyof typeof route.methods, route.pattern, { before: [scopeCheck(scope)] }, forwardTo(upstreams[route.upstream]));
    }
  }
}
