import type { FastRoute, FastStep, HttpApp } from '@sched/http';

/**
 * Every /v1 operation before express (libs/http fast-path.ts): key authentication and rate limit
 * (`auth`, the `/v1` middleware itself), then the route's own handlers (scope check; for a POST the
 * body parser and the input guard; forwarding), as the router would run them. The router would visit
 * some sixty layers (admin paths, the booking page, fallbacks) to find the route; this is one lookup.
 * Anything the fast path does not take (other methods, a GET with a body, paths that are not exactly
 * a v1 route) goes to express untouched.
 *
 * In express, `auth` is the `/v1` middleware, after only the request context and the `/admin`
 * middleware (which does not act on /v1 paths); `routes` are the v1 routes in registration order
 * (registerV1Routes), and no route registered before them matches their paths (the OpenAPI
 * document's path has no fast-path counterpart).
 */
export function registerV1FastPath(http: HttpApp, routes: FastRoute[], auth: FastStep): void {
  for (const route of routes) if (!route.pattern.startsWith('/v1/')) throw new Error(`v1 fast path: not a /v1 route: ${route.pattern}`);
  http.fastPath({ routes, before: [auth] });
}
