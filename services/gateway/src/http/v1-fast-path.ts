import type { RequestHandler } from 'express';
import { fastPath, type FastRoute } from '@sched/http';

/**
 * The hot /v1 GETs without the express router (libs/http fast-path.ts): key authentication and rate
 * limit (`auth`, the `/v1` middleware itself), then the route's own handlers (scope check, input
 * guard, forwarding), as the router would run them. The router would visit some sixty layers (admin
 * paths, the booking page, fallbacks) to find the route; this is one lookup. Anything the fast path
 * does not take (other methods, bodies, paths that are not exactly a v1 route) goes on untouched.
 *
 * Installed after the request context and before the `/admin` and `/v1` middlewares; `routes` are
 * the v1 GET routes in registration order, which come before every other route that could match.
 */
export function v1FastPath(routes: FastRoute[], auth: RequestHandler): RequestHandler {
  for (const route of routes) if (!route.pattern.startsWith('/v1/')) throw new Error(`v1 fast path: not a /v1 route: ${route.pattern}`);
  return fastPath(routes, { before: [auth] });
}
