import dc from 'node:diagnostics_channel';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { fastPathTakerOf, type FastPathTaker } from './fast-path';

/**
 * Requests and responses born with the app's express prototypes (app.request / app.response), so that
 * express's per-request Object.setPrototypeOf (app.handle) finds them already in place instead of
 * changing the shape of two live objects on every request. Everything else about them is node's.
 */
export function expressMessageClasses(app: Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  function ExpressRequest(this: IncomingMessage, socket: unknown): void {
    (http.IncomingMessage as unknown as (this: IncomingMessage, socket: unknown) => void).call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: ServerResponse, req: unknown, options: unknown): void {
    (http.ServerResponse as unknown as (this: ServerResponse, req: unknown, options: unknown) => void).call(this, req, options);
  }
  ExpressResponse.prototype = app.response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof http.ServerResponse,
  };
}

/** The router's tracing channel: with subscribers, every request goes through express so they see it. */
const routerTracing = dc.tracingChannel('express.router.request');
const traced = () =>
  routerTracing.start.hasSubscribers ||
  routerTracing.end.hasSubscribers ||
  routerTracing.asyncStart.hasSubscribers ||
  routerTracing.asyncEnd.hasSubscribers ||
  routerTracing.error.hasSubscribers;

interface RouterLayer {
  handle: ((...args: never[]) => unknown) & { length: number };
  route?: unknown;
  slash?: boolean;
}

/**
 * What the router would run for a request a fast path takes, read off the finished app: the app's
 * own first middlewares (`leading`), then only route layers (which the fast path's caller guarantees
 * do not match its requests), then the fastPath middleware mounted at the root; after it the only
 * error handler is the last layer, `errors`. Any other arrangement: undefined (express handles all).
 */
function plan(app: Express, leading: RequestHandler[], errors: ErrorRequestHandler): FastPathTaker | undefined {
  const stack = (app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack;
  if (!stack || stack.length < leading.length + 2) return undefined;
  for (let i = 0; i < leading.length; i++) if (stack[i]!.handle !== leading[i] || !stack[i]!.slash) return undefined;
  let i = leading.length;
  while (i < stack.length && stack[i]!.route !== undefined) i++;
  const layer = stack[i];
  const taker = layer?.slash ? fastPathTakerOf(layer.handle) : undefined;
  if (!taker) return undefined;
  const last = stack.length - 1;
  if (stack[last]!.handle !== errors) return undefined;
  for (let j = i + 1; j < last; j++) if (stack[j]!.route === undefined && stack[j]!.handle.length === 4) return undefined;
  return taker;
}

/**
 * The server's request listener: a request a fast path takes (libs/http fast-path.ts) runs the same
 * middlewares and handlers as through express (`leading`, the fast path's steps, `errors`), with the
 * same req/res objects and express's own response methods, but without app.handle and the router;
 * everything else goes to `app` untouched. The plan is read when listening starts (after finalize()).
 */
export function preExpressListener(app: Express, leading: RequestHandler[], errors: ErrorRequestHandler): RequestListener {
  const taker = plan(app, leading, errors);
  if (!taker) return app;
  const settings = app.settings as Record<string, unknown>;

  return (incoming, outgoing) => {
    const run = settings['x-powered-by'] || traced() ? undefined : taker(incoming);
    if (!run) {
      app(incoming, outgoing);
      return;
    }
    const req = incoming as Request;
    const res = outgoing as Response;
    // What app.handle does (x-powered-by is off: checked above).
    req.res = res;
    res.req = req;
    if (Object.getPrototypeOf(req) !== app.request) Object.setPrototypeOf(req, app.request);
    if (Object.getPrototypeOf(res) !== app.response) Object.setPrototypeOf(res, app.response);
    if (!res.locals) res.locals = Object.create(null) as Record<string, unknown>;

    // The router's end of the line for an error the error middleware passed on, which it does only
    // once the body has started: as finalhandler then, cut the connection and log the error.
    const finalHandler = (err: unknown) => {
      setImmediate(() => {
        // eslint-disable-next-line no-console -- express's own last resort (application.js logerror), kept as it is
        if (err && app.get('env') !== 'test') setImmediate(() => console.error(err));
        req.socket?.destroy();
      });
    };
    // After the fast path's steps, only an error reaches here; the router would skip to the error middleware.
    const toErrors: NextFunction = (err?: unknown) => {
      if (err === undefined || err === null || err === 'route' || err === 'router') return;
      // The error middleware is a root layer: the router gives it that layer's (empty) params.
      req.params = {};
      try {
        const ret = errors(err, req, res, finalHandler) as unknown;
        if (ret instanceof Promise) ret.catch((e: unknown) => finalHandler(e ?? new Error('Rejected promise')));
      } catch (e) {
        finalHandler(e);
      }
    };
    // What router.handle sets up before its layers, and each root middleware layer's params.
    req.next = toErrors;
    req.baseUrl = '';
    req.originalUrl = req.originalUrl || req.url;
    req.params = {};
    runLeading(leading, 0, req, res, () => run(req, res, toErrors), toErrors);
  };
}

function runLeading(leading: RequestHandler[], index: number, req: Request, res: Response, then: () => void, fail: NextFunction): void {
  if (index === leading.length) return then();
  let called = false;
  try {
    const ret = leading[index]!(req, res, (err?: unknown) => {
      if (called) return;
      called = true;
      if (err !== undefined && err !== null && err !== 'route') return fail(err);
      runLeading(leading, index + 1, req, res, then, fail);
    }) as unknown;
    if (ret instanceof Promise) ret.catch((err: unknown) => fail(err ?? new Error('Rejected promise')));
  } catch (err) {
    fail(err);
  }
}
