import type { Express, RequestHandler } from 'express';
import { DomainError } from '@sched/contracts';
import { UNMATCHED_ROUTE } from './request-context.middleware';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const EXPRESS_METHOD = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'delete' } as const;

/** Methods registered per path pattern, in registration order, to answer 405 with a correct `Allow`. */
export class RouteTable {
  private readonly methods = new Map<string, Set<string>>();

  constructor(private readonly app: Express) {}

  add(method: HttpMethod, path: string, handlers: RequestHandler[]): void {
    this.app[EXPRESS_METHOD[method]](path, ...handlers);
    const set = this.methods.get(path) ?? new Set<string>();
    set.add(method);
    // express answers HEAD with the GET route, so HEAD is allowed wherever GET is.
    if (method === 'GET') set.add('HEAD');
    this.methods.set(path, set);
  }

  /**
   * Installs, after every route, one `all` per known path that only collects its methods, then a final
   * handler: some path matched → 405 with `Allow` (union over overlapping patterns), none → 404.
   * Matching is left to express so it is exactly the routes' own (path-to-regexp v8) semantics.
   */
  installFallbacks(): void {
    for (const [path, methods] of this.methods) {
      this.app.all(path, (_req, res, next) => {
        const allowed = (res.locals.allowedMethods as Set<string> | undefined) ?? new Set<string>();
        for (const m of methods) allowed.add(m);
        res.locals.allowedMethods = allowed;
        res.locals.routePattern ??= path;
        next();
      });
    }
    this.app.use((_req, res, next) => {
      const allowed = res.locals.allowedMethods as Set<string> | undefined;
      if (!allowed) {
        res.locals.routePattern = UNMATCHED_ROUTE;
        return next(new DomainError('not_found'));
      }
      res.setHeader('Allow', [...allowed].join(', '));
      next(new DomainError('method_not_allowed'));
    });
  }
}
