import type http from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '@sched/logger';
import { errorAnswer, errorMiddleware } from './error.middleware';
import { checkFastPattern, fastPathListener, type FastRoute, type FastStep } from './fast-path';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, GracefulServer } from './graceful-server';
import { healthz, metrics, readyz, type ReadinessChecks } from './health.routes';
import { createHttpMetrics } from './http-metrics';
import { createOpsApp } from './ops-app';
import { inputGuard } from './input-guard.middleware';
import { jsonBody } from './json-body.middleware';
import type { CredentialVerifier } from './internal-credential';
import { requestContextMiddleware } from './request-context.middleware';
import { accessCheck, accessKey, OPEN_ROUTES, type AccessTable } from './route-access';
import { RouteTable, type HttpMethod } from './route-table';

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  /** Named checks for `/readyz` (e.g. `{ postgres: () => pool.query('select 1') }`), each bounded to 2 s. */
  readiness?: ReadinessChecks;
  /**
   * Behind the gateway: every request but the probes must carry a valid internal credential for this
   * service (401 before anything else), and each route must have a rule in `access` (403 after
   * routing). A route without a rule, or a rule without a route, fails the start-up.
   */
  internalAuth?: { verifier: CredentialVerifier; access: AccessTable };
  /** How long close() waits for in-flight requests before cutting connections. */
  shutdownTimeoutMs?: number;
  /**
   * Serve `/readyz` and `/metrics` only on a second, operations listener (listenOps()), which also
   * answers `/healthz`; the app's own port keeps `/healthz` only. For the public gateway: readiness
   * details and metrics are for probes and the scrape, not for the internet.
   */
  separateOps?: boolean;
}

export interface RouteOptions {
  /** Run after routing but before the body is read, e.g. the gateway's scope check (403 before 413/415). */
  before?: RequestHandler[];
}

export interface FastPathRoutes {
  /** The routes, each also registered with http.route (where the router runs the same steps). */
  routes: FastRoute[];
  /** Steps the router runs for these requests before routing, after the app's own first ones (e.g. the gateway's key auth). */
  before?: FastStep[];
}

export interface HttpApp {
  app: Express;
  /** This app's metrics registry; add service metrics with `registers: [registry]`. */
  registry: Registry;
  /**
   * Handlers are express's; a FastStep (node's req, res, next) is one too. Answers every handler the
   * route runs, in order (access check, `before`, body parser, input guard, the handlers): the steps
   * of a fast path's route of another method than GET.
   */
  route(method: HttpMethod, path: string, ...handlers: RequestHandler[]): FastStep[];
  route(method: HttpMethod, path: string, options: RouteOptions, ...handlers: RequestHandler[]): FastStep[];
  /** The access check http.route puts first on a route, for a fast path that runs the route's handlers itself. */
  guard(method: HttpMethod, path: string): FastStep[];
  /**
   * Serves these routes before express, on node's request and response (fast-path.ts; the documented
   * hot routes: docs/availability.md, "Fast path"). Everything else goes to the app.
   */
  fastPath(fast: FastPathRoutes): void;
  /** Installs 405/404 and the error middleware; call after the last route (listen() does it if needed). */
  finalize(): void;
  listen(port: number, host: string): Promise<http.Server>;
  /** With `separateOps`: listens on the operations port (GET /healthz, /readyz, /metrics; anything else 404). */
  listenOps(port: number, host: string): Promise<http.Server>;
  /** Stops accepting, waits for in-flight requests, forces after the timeout (then closes the operations listener). For SIGTERM. */
  close(opts?: { timeoutMs?: number }): Promise<void>;
}

function splitRouteArgs(args: Array<RouteOptions | RequestHandler>): { options: RouteOptions; handlers: RequestHandler[] } {
  const [first, ...rest] = args;
  if (first !== undefined && typeof first !== 'function') return { options: first, handlers: rest as RequestHandler[] };
  return { options: {}, handlers: args as RequestHandler[] };
}

/** The express app every service uses: request id, logging, metrics, health, envelopes, 404/405, errors. */
export function createHttpApp(opts: HttpAppOptions): HttpApp {
  const app = express();
  app.disable('x-powered-by');
  // API responses are computed per request; weak ETags would only add surprise 304s. (The envelopes
  // are written by respond.ts's sendText, which is res.send for exactly these settings.)
  app.set('etag', false);

  const httpMetrics = createHttpMetrics(opts.service);
  const context = requestContextMiddleware({ logger: opts.logger, metrics: httpMetrics, verifier: opts.internalAuth?.verifier });
  const errors = errorMiddleware(opts.logger);
  const fastPaths: Array<FastPathRoutes & { taken: Counter }> = [];
  // With a fast path, its routes are answered by plain node code and the rest goes to the app
  // (fast-path.ts); the same first steps run on both.
  const server: GracefulServer = new GracefulServer(app, opts.logger, opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS, () => {
    const [fast] = fastPaths;
    if (!fast) return app;
    return fastPathListener({
      routes: fast.routes,
      before: fast.before,
      leading: [context, server.connectionCloseWhileStopping],
      answerError: errorAnswer(opts.logger),
      fallback: app,
      taken: () => fast.taken.inc(),
    });
  });
  const routes = new RouteTable(app);
  let finalized = false;

  app.use(context);
  app.use(server.connectionCloseWhileStopping);

  const guarded = new Set<string>();
  function guard(method: HttpMethod, path: string): FastStep[] {
    const key = accessKey(method, path);
    if (!opts.internalAuth || OPEN_ROUTES.has(key)) return [];
    const rule = opts.internalAuth.access[key];
    if (!rule) throw new Error(`${opts.service}: route ${key} has no access rule (who may call it?)`);
    guarded.add(key);
    return [accessCheck(rule)];
  }

  function route(method: HttpMethod, path: string, ...args: Array<RouteOptions | RequestHandler>): FastStep[] {
    if (finalized) throw new Error(`route ${method} ${path} registered after finalize()`);
    const { options, handlers } = splitRouteArgs(args);
    const all = [...guard(method, path), ...(options.before ?? []), jsonBody, inputGuard, ...handlers];
    routes.add(method, path, all);
    // As fast steps: the access check is one; the body parser and the input guard work on the fast
    // path's requests too (born with express's prototypes, express-messages.ts; the fast path sets
    // `params` and `originalUrl` as the router does). The caller's own handlers must be fast steps
    // for the list to run on the fast path.
    return all as unknown as FastStep[];
  }

  function fastPath(fast: FastPathRoutes): void {
    if (finalized) throw new Error(`${opts.service}: fast path registered after finalize()`);
    if (fastPaths.length > 0) throw new Error(`${opts.service}: one fast path per app`);
    for (const r of fast.routes) {
      checkFastPattern(r.pattern);
      // Only a GET without a body may skip them (fast-path.ts): any other request may carry one.
      if ((r.method ?? 'GET') !== 'GET' && !(r.steps.includes(jsonBody as unknown as FastStep) && r.steps.includes(inputGuard as unknown as FastStep))) {
        throw new Error(`${opts.service}: fast path route ${r.method} ${r.pattern} without the body parser and input guard (use the steps http.route answers)`);
      }
    }
    const taken = new Counter({ name: 'http_fast_path_requests_total', help: 'HTTP requests answered by the fast path, before express', registers: [httpMetrics.registry] });
    fastPaths.push({ ...fast, taken });
  }

  const ops = {
    '/healthz': healthz,
    // While the main port drains, readiness (on either listener) reports stopping.
    '/readyz': readyz({ checks: opts.readiness ?? {}, logger: opts.logger, isStopping: () => server.stopping }),
    '/metrics': metrics(httpMetrics.registry),
  };
  const opsApp = opts.separateOps
    ? createOpsApp({ logger: opts.logger, metrics: httpMetrics, shutdownTimeoutMs: opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS, routes: ops })
    : undefined;
  let closing: Promise<void> | undefined;
  route('GET', '/healthz', healthz);
  if (!opsApp) {
    route('GET', '/readyz', ops['/readyz']);
    route('GET', '/metrics', ops['/metrics']);
  }

  function finalize(): void {
    if (finalized) return;
    const stale = Object.keys(opts.internalAuth?.access ?? {}).filter((key) => !guarded.has(key));
    if (stale.length > 0) throw new Error(`${opts.service}: access rules for routes it does not have: ${stale.join(', ')}`);
    finalized = true;
    routes.installFallbacks();
    app.use(errors);
  }

  return {
    app,
    registry: httpMetrics.registry,
    route,
    guard,
    fastPath,
    finalize,
    listen(port, host) {
      finalize();
      return server.listen(port, host);
    },
    listenOps(port, host) {
      if (!opsApp) throw new Error(`${opts.service}: listenOps() needs createHttpApp({ separateOps: true })`);
      return opsApp.listen(port, host);
    },
    // Idempotent like GracefulServer.close: a second closer awaits the same drain.
    close(closeOpts) {
      closing ??= server.close(closeOpts?.timeoutMs).then(() => opsApp?.close(closeOpts?.timeoutMs));
      return closing;
    },
  };
}
