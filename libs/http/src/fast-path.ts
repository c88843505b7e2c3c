import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { isPlainQuery } from './input-guard.middleware';
import type { HttpMethod } from './route-table';

/**
 * A request as a fast step sees it: node's own, with the matched route's params. express's Request is
 * one too, so a step is also an express handler (the router runs the same function).
 */
export type FastRequest = IncomingMessage & {
  /** Strings on the fast path; express's types allow a wildcard's list too. */
  params: Record<string, string | string[]>;
  /** The URL before mounting: set by express, and by the fast path (where it is `url`). */
  originalUrl?: string;
  /** The parsed JSON body (jsonBody), on either path; a GET on the fast path has none. */
  body?: unknown;
};

/**
 * One handler of a routed request, on node's request and response only (no express API): `next()`
 * goes on to the next one, `next(err)` to the error answer. The same function is registered on the
 * express route (http.route), where express runs it.
 */
export type FastStep = (req: FastRequest, res: ServerResponse, next: (err?: unknown) => void) => unknown;

export interface FastRoute {
  /**
   * The route's method; default GET. A route of another method takes requests with a body, so its
   * `steps` must be all the handlers http.route registered for it (which returns them), the body
   * parser and the input guard included.
   */
  method?: HttpMethod;
  /** The route's pattern exactly as registered with http.route, e.g. `/v1/event-types/:eventType/slots`. */
  pattern: string;
  /**
   * The handlers http.route runs for it after routing. A GET route may leave out the body parser and
   * the input guard, which do nothing for the GETs the fast path takes (see fastPathListener).
   */
  steps: FastStep[];
}

interface Compiled {
  pattern: string;
  /** Per segment: the literal to equal, or null for a parameter. */
  segments: Array<string | null>;
  params: string[];
  steps: FastStep[];
}

/** A segment the fast path accepts: nothing that percent-decoding, letter case or dots could make ambiguous. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;
/** A path of such segments only, each after one '/'. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+$/;

/**
 * The pattern of the route a fast-path request entered (for the metrics label and the error log),
 * kept on the request under a symbol of this module: no other code can name it, and it goes with the
 * request. (A WeakMap of requests measured about 0.7 µs per request: an ephemeron entry made per request.)
 */
const ENTERED = Symbol('sched.fastRoute');
type Entered = IncomingMessage & { [ENTERED]?: string };

/** The route pattern the fast path matched for this request, once its `before` steps let it in. */
export function fastRouteOf(req: IncomingMessage): string | undefined {
  return (req as Entered)[ENTERED];
}

/**
 * Runs handlers in order as the router does: each gets a once-only callback; an error passed to it,
 * thrown, or a rejected promise goes to `fail`. A last handler that calls back without an error ends
 * the chain (the fast path's routes never do: they answer).
 */
function runSteps(steps: readonly FastStep[], index: number, req: FastRequest, res: ServerResponse, fail: (err: unknown) => void): void {
  let called = false;
  try {
    // The callback is made inline, not bound to a name: a build that keeps function names (tsx, which
    // the benches run) would otherwise name each one, per step and request.
    const ret = steps[index]!(req, res, (err?: unknown) => {
      if (called) return;
      called = true;
      if (err !== undefined && err !== null) return fail(err);
      if (index + 1 < steps.length) runSteps(steps, index + 1, req, res, fail);
    });
    if (ret instanceof Promise) ret.catch((err: unknown) => fail(err ?? new Error('Rejected promise')));
  } catch (err) {
    fail(err);
  }
}

/** Throws for a pattern the fast path cannot match exactly as the router does (only literal and :param segments). */
export function checkFastPattern(pattern: string): void {
  const parts = pattern.split('/').slice(1);
  if (!pattern.startsWith('/') || parts.some((p) => !PLAIN_SEGMENT.test(p.startsWith(':') ? p.slice(1) : p))) {
    throw new Error(`fastPath: only literal and :param segments: ${pattern}`);
  }
}

/** Per method, per number of segments: the routes in registration order. */
type CompiledRoutes = Map<string, Map<number, Compiled[]>>;

function compile(routes: readonly FastRoute[], before: readonly FastStep[]): CompiledRoutes {
  const byMethod: CompiledRoutes = new Map();
  for (const route of routes) {
    checkFastPattern(route.pattern);
    const parts = route.pattern.split('/').slice(1);
    const pattern = route.pattern;
    // Past `before`, the router would have matched the route: from here its pattern labels the request.
    const enter: FastStep = (req, _res, next) => {
      (req as Entered)[ENTERED] = pattern;
      next();
    };
    const compiled: Compiled = {
      pattern,
      segments: parts.map((p) => (p.startsWith(':') ? null : p)),
      params: parts.filter((p) => p.startsWith(':')).map((p) => p.slice(1)),
      steps: [...before, enter, ...route.steps],
    };
    const method = route.method ?? 'GET';
    const byLength = byMethod.get(method) ?? new Map<number, Compiled[]>();
    byMethod.set(method, byLength);
    const list = byLength.get(parts.length) ?? [];
    list.push(compiled);
    byLength.set(parts.length, list);
  }
  return byMethod;
}

export interface FastPathOptions {
  routes: readonly FastRoute[];
  /** Steps before the route is entered, e.g. the gateway's key authentication and rate limit. */
  before?: readonly FastStep[];
  /** The app's own first steps, run for every request it takes (request context, close-while-stopping). */
  leading: readonly FastStep[];
  /** The error answer (the app's error middleware as a function); false: the answer had started. */
  answerError: (err: unknown, req: FastRequest, res: ServerResponse) => boolean;
  /** Everything the fast path does not take: the express app, called as express documents, app(req, res). */
  fallback: RequestListener;
  /** Called for each request the fast path takes (a metric). */
  taken?: () => void;
}

/**
 * The server's request listener when an app has a fast path: a few hot routes answered by plain
 * node:http code, everything else handed to the express app untouched (docs/availability.md, "Fast
 * path"). It takes a request whose method and path are exactly one of `routes` (plain segments, no
 * trailing slash, the pattern's own spelling of its literals) and whose query has no escapes that the
 * input guard would have to look at; a GET only without a body. Whose matching is the router's to
 * decide (other methods, a GET with a body, case variants, escapes, trailing slashes, other paths)
 * goes to `fallback` before any side effect.
 *
 * A request it takes runs the app's `leading` steps, `before`, then the route's steps: the same
 * function objects the router runs for it, in the same order. For that to hold, the caller
 * guarantees that no express layer between the leading middlewares and the route acts on these
 * requests other than what `before` does, that `routes` are in registration order and include every
 * route of their method registered before them that could match the same paths, and that each
 * route's last step answers or fails.
 */
export function fastPathListener(opts: FastPathOptions): RequestListener {
  const byMethod = compile(opts.routes, [...opts.leading, ...(opts.before ?? [])]);
  const { answerError, fallback, taken } = opts;

  function match(byLength: Map<number, Compiled[]>, url: string): [Compiled, Record<string, string>] | undefined {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    // One test for the whole path: '/' then plain segments (so segments[0] is '' and no segment is empty).
    if (!PLAIN_PATH.test(path)) return undefined;
    const segments = path.split('/');
    const candidates = byLength.get(segments.length - 1);
    if (!candidates) return undefined;
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
      // As the router's: an object without a prototype.
      const params = Object.create(null) as Record<string, string>;
      let p = 0;
      for (let i = 0; i < compiled.segments.length; i++) if (compiled.segments[i] === null) params[compiled.params[p++]!] = segments[i + 1]!;
      return [compiled, params];
    }
    return undefined;
  }

  /** A GET with a body is the router's: the fast path's GET routes may leave out the body parser. */
  const takes = (req: IncomingMessage): boolean =>
    req.method !== 'GET' || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);

  return (req, res) => {
    const url = req.url!;
    const byLength = byMethod.get(req.method!);
    const found = byLength !== undefined && takes(req) && isPlainQuery(url) ? match(byLength, url) : undefined;
    if (!found) {
      fallback(req, res);
      return;
    }
    taken?.();
    const [compiled, params] = found;
    const fastReq = req as FastRequest;
    fastReq.params = params;
    // As express's app.handle sets it (the input guard and the forwarding read it).
    fastReq.originalUrl = url;
    runSteps(compiled.steps, 0, fastReq, res, (err) => {
      // Once the body has started there is no envelope to send: cut the connection, as express does.
      if (!answerError(err, fastReq, res)) req.socket.destroy();
    });
  };
}
