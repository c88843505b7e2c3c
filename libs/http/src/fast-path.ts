import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * One handler of a routed request, as the router would run it: `done()` goes on to the next one,
 * `done(err)` to the error middleware.
 */
export type FastStep = (req: Request, res: Response, done: NextFunction) => unknown;

export interface FastRoute {
  /** The route's pattern exactly as registered with http.route, e.g. `/v1/event-types/:eventType/slots`. */
  pattern: string;
  /** The handlers http.route runs for it after routing, without the body parser (see fastPath). */
  steps: FastStep[];
}

interface Compiled {
  pattern: string;
  /** Per segment: the literal to equal, or null for a parameter. */
  segments: Array<string | null>;
  params: string[];
  /** `before`, then one step entering the route, then the route's own steps. */
  steps: FastStep[];
}

/** A segment the fast path accepts: nothing that percent-decoding, letter case or dots could make ambiguous. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;
const MATCHED = Symbol('fastPathMatch');
type WithMatch = Request & { [MATCHED]?: { params: Record<string, string>; pattern: string } };

/**
 * Runs handlers in order as the router does: each gets a once-only callback; an error passed to it,
 * thrown, or a rejected promise goes to `next(err)` and so to the error middleware. A last handler
 * that calls back without an error ends the chain (fastPath's routes never do: they answer).
 */
function runSteps(steps: FastStep[], index: number, req: Request, res: Response, next: NextFunction): void {
  let called = false;
  const done: NextFunction = (err?: unknown) => {
    if (called) return;
    called = true;
    if (err !== undefined && err !== null) return next(err);
    if (index + 1 < steps.length) runSteps(steps, index + 1, req, res, next);
  };
  try {
    const ret = steps[index]!(req, res, done);
    if (ret instanceof Promise) ret.catch((err: unknown) => next(err ?? new Error('Rejected promise')));
  } catch (err) {
    next(err);
  }
}

/** Past `before`, the router would have matched the route: its params, its pattern (metrics label, error log). */
const enterRoute: FastStep = (req, res, done) => {
  const match = (req as WithMatch)[MATCHED]!;
  // path-to-regexp's params object has no prototype; so does this one.
  req.params = Object.assign(Object.create(null) as Record<string, string>, match.params);
  (req as { route?: unknown }).route = { path: match.pattern };
  res.locals.routePattern = match.pattern;
  done();
};

/**
 * A few hot GET routes without the express router. A GET without a body whose path is exactly one
 * of `routes` (plain segments, no trailing slash, the pattern's own spelling of its literals) runs
 * `before` and then the route's handlers, the ones the router would have run, in the same order.
 * Everything else (other methods, a body, case variants, escapes, trailing slashes, other paths: all
 * whose matching is the router's to decide) calls `next()` untouched, before any side effect.
 *
 * For the answers to stay the router's, the caller guarantees that:
 * - this middleware is installed where the router would start looking for these routes: no layer
 *   between it and them acts on their requests, other than what `before` reproduces;
 * - `routes` are in registration order and include every GET route registered before them that
 *   could match the same paths;
 * - the steps are the route's handlers minus the body parser (which does nothing without a body),
 *   and the last one answers or fails: it never calls next() to pass the request on.
 */
export function fastPath(routes: FastRoute[], opts: { before?: FastStep[] } = {}): RequestHandler {
  const byLength = new Map<number, Compiled[]>();
  for (const route of routes) {
    const parts = route.pattern.split('/').slice(1);
    if (!route.pattern.startsWith('/') || parts.some((p) => !PLAIN_SEGMENT.test(p.startsWith(':') ? p.slice(1) : p))) {
      throw new Error(`fastPath: only literal and :param segments: ${route.pattern}`);
    }
    const compiled: Compiled = {
      pattern: route.pattern,
      segments: parts.map((p) => (p.startsWith(':') ? null : p)),
      params: parts.filter((p) => p.startsWith(':')).map((p) => p.slice(1)),
      steps: [...(opts.before ?? []), enterRoute, ...route.steps],
    };
    const list = byLength.get(parts.length) ?? [];
    list.push(compiled);
    byLength.set(parts.length, list);
  }

  function match(url: string): [Compiled, Record<string, string>] | undefined {
    const q = url.indexOf('?');
    const segments = (q < 0 ? url : url.slice(0, q)).split('/');
    // A path starts with '/': segments[0] is ''.
    if (segments[0] !== '') return undefined;
    const candidates = byLength.get(segments.length - 1);
    if (!candidates) return undefined;
    for (let i = 1; i < segments.length; i++) if (!PLAIN_SEGMENT.test(segments[i]!)) return undefined;
    // Registration order, like the router: the first route whose literals all match.
    for (const compiled of candidates) {
      let ok = true;
      for (let i = 0; i < compiled.segments.length; i++) {
        const literal = compiled.segments[i];
        if (literal !== null && literal !== segments[i + 1]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      const params: Record<string, string> = {};
      let p = 0;
      for (let i = 0; i < compiled.segments.length; i++) if (compiled.segments[i] === null) params[compiled.params[p++]!] = segments[i + 1]!;
      return [compiled, params];
    }
    return undefined;
  }

  /** The route this request takes, before any side effect; undefined: the router's to decide. */
  const take: FastPathTaker = (req) => {
    if (req.method !== 'GET' || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return undefined;
    const found = match(req.url!);
    if (!found) return undefined;
    const [compiled, params] = found;
    return (r, res, next) => {
      (r as WithMatch)[MATCHED] = { params, pattern: compiled.pattern };
      runSteps(compiled.steps, 0, r, res, next);
    };
  };
  const middleware: RequestHandler = (req, res, next) => {
    const run = take(req);
    if (!run) return next();
    run(req, res, next);
  };
  return Object.assign(middleware, { [FAST_PATH]: take });
}

/**
 * Decides, from method, headers and URL only, whether a fast path takes a request: the steps to run
 * (as the middleware would, from where it sits), or undefined.
 */
export type FastPathTaker = (req: IncomingMessage) => ((req: Request, res: Response, next: NextFunction) => void) | undefined;

/** Where createHttpApp finds the taker of a fastPath middleware, to run it before express (pre-express.ts). */
export const FAST_PATH = Symbol('fastPath');

/** The taker of a middleware made by fastPath(), if it is one. */
export function fastPathTakerOf(handler: unknown): FastPathTaker | undefined {
  return typeof handler === 'function' ? (handler as { [FAST_PATH]?: FastPathTaker })[FAST_PATH] : undefined;
}
