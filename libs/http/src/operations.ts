import type { ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { v1OperationsOf, type PathParamNames, type V1Operation, type V1OperationById, type V1OperationIdOf, type V1Owner } from '@sched/contracts';
import type { HttpApp } from './create-http-app';
import type { FastRequest, FastStep } from './fast-path';
import { accessKey, apiKeyWith, type AccessTable, type RouteAccess } from './route-access';
import { NO_BODY, NO_QUERY, parseBody, parseQuery } from './validation';

/** What a handler of one operation receives, parsed with the table's schemas. */
export interface OperationInput<Op extends V1Operation> {
  /**
   * The path parameters as matched by the route: strings by construction. An id's format is the use
   * case's to judge (a malformed id is the same 404 as an unknown one, decisions.md §2).
   */
  params: Readonly<Record<PathParamNames<Op['path']>, string>>;
  /** The query parsed with the operation's schema; `{}` for an operation that takes none. */
  query: Op extends { query: infer Q extends z.ZodType } ? z.output<Q> : Readonly<Record<string, never>>;
  /** The body parsed with the operation's schema; undefined where it may be absent and is, or where the operation takes none. */
  body: Op extends { body: infer B extends z.ZodType } ? (Op extends { bodyRequired: false } ? z.output<B> | undefined : z.output<B>) : undefined;
}

/** Answers one operation (on `res`) from its parsed input; a thrown DomainError becomes the error envelope. */
export type OperationHandler<Op extends V1Operation> = (input: OperationInput<Op>, req: Request, res: Response) => unknown;

/** One handler per operation the service owns in V1_OPERATIONS: no more, no fewer. */
export type OperationHandlers<Owner extends V1Owner> = { [Id in V1OperationIdOf<Owner>]: OperationHandler<V1OperationById<Id>> };

export interface RegisterOperationsOptions<Owner extends V1Owner> {
  /**
   * A query parser that replaces the schema's for an operation, e.g. a cache of parsed queries on a
   * hot path. It must accept and refuse exactly what the schema does.
   */
  parseQuery?: { [Id in V1OperationIdOf<Owner>]?: (req: FastRequest) => OperationInput<V1OperationById<Id>>['query'] };
  /**
   * GET operations served by the app's fast path (libs/http fast-path.ts): their plain requests are
   * answered before express by the route's own steps. Their handlers (and query parsers) must use
   * node's request and response only (FastRequest, ServerResponse): that is all the fast path has.
   */
  fast?: ReadonlyArray<V1OperationIdOf<Owner>>;
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

/**
 * The handlers `owner` gives, checked against the operations it owns: a missing or an extra one (a
 * typo, an operation moved to another service) fails the start-up, naming it.
 */
export function checkOperationHandlers(owner: V1Owner, handlers: Readonly<Record<string, unknown>>): V1Operation[] {
  const owned = v1OperationsOf(owner);
  const ids = new Set(owned.map((op) => op.operationId));
  const missing = [...ids].filter((id) => typeof handlers[id] !== 'function');
  const extra = Object.keys(handlers).filter((id) => !ids.has(id));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [missing.length > 0 ? `no handler for ${missing.join(', ')}` : '', extra.length > 0 ? `handlers for operations it does not own: ${extra.join(', ')}` : ''];
    throw new Error(`${owner}: V1_OPERATIONS (libs/contracts operations.ts) and its handlers disagree: ${parts.filter(Boolean).join('; ')}`);
  }
  return owned;
}

/** The route handler of one operation: parses query and body with the table's schemas, then hands over. */
function operationRoute(op: V1Operation, handle: OperationHandler<V1Operation>, customQuery?: (req: FastRequest) => unknown): FastStep {
  const querySchema = op.query ?? NO_QUERY;
  const bodySchema = op.body ?? NO_BODY;
  const bodyOptional = op.body === undefined || op.bodyRequired === false;
  // Not async: the handler's own promise (or throw) goes to the router or the fast path as it is,
  // which pass a rejection or a throw to the error middleware; no second promise per request.
  return (req: FastRequest, res: ServerResponse) => {
    // Without a query string or a body there is nothing to parse (the hot GETs): no work, no allocation.
    const query = customQuery ? customQuery(req) : op.query === undefined && !(req.originalUrl ?? req.url ?? '').includes('?') ? EMPTY : parseQuery(querySchema, req);
    const body = req.body === undefined && bodyOptional ? undefined : parseBody(bodySchema, req);
    // Under express these are its Request and Response; on the fast path only their node parts exist
    // (RegisterOperationsOptions.fast says what a fast operation's handler may use).
    return handle({ params: req.params, query, body: op.body === undefined ? undefined : body } as OperationInput<V1Operation>, req as Request, res as Response);
  };
}

/**
 * Mounts every v1 operation `owner` owns (libs/contracts V1_OPERATIONS) with the table's method and
 * path, parsing its query and body with the table's schemas before the handler runs. A handler
 * missing or extra fails here, at start-up. A new operation is one table entry plus its handler.
 */
export function registerOperations<Owner extends V1Owner>(http: HttpApp, owner: Owner, handlers: OperationHandlers<Owner>, opts: RegisterOperationsOptions<Owner> = {}): void {
  const byId = handlers as unknown as Record<string, OperationHandler<V1Operation>>;
  const queryParsers = (opts.parseQuery ?? {}) as Record<string, ((req: FastRequest) => unknown) | undefined>;
  const routes = checkOperationHandlers(owner, byId).map((op) => ({ op, handler: operationRoute(op, byId[op.operationId]!, queryParsers[op.operationId]) }));
  const fast = routes.filter((r) => (opts.fast as readonly string[] | undefined)?.includes(r.op.operationId));
  if (fast.length !== (opts.fast?.length ?? 0) || fast.some((r) => r.op.method !== 'GET')) {
    throw new Error(`${owner}: the fast path takes only GET operations it owns: ${(opts.fast ?? []).join(', ')}`);
  }
  // The steps http.route runs after routing (the access check, the handler), minus the body parser and
  // the input guard, which have nothing to do for the requests the fast path takes (fast-path.ts).
  if (fast.length > 0) http.fastPath({ routes: fast.map((r) => ({ pattern: r.op.path, steps: [...http.guard('GET', r.op.path), r.handler] })) });
  for (const { op, handler } of routes) http.route(op.method, op.path, handler);
}

/**
 * The access rules (route-access.ts) of the operations `owner` owns: the gateway forwards them for
 * an API key holding the operation's scope. `widen` lets more callers in for an operation (the key's
 * scope is still checked for an API key principal).
 */
export function operationAccess<Owner extends V1Owner>(
  owner: Owner,
  widen: { [Id in V1OperationIdOf<Owner>]?: Pick<RouteAccess, 'callers' | 'principals'> } = {},
): AccessTable {
  const extra = widen as Record<string, Pick<RouteAccess, 'callers' | 'principals'> | undefined>;
  return Object.fromEntries(
    v1OperationsOf(owner).map((op) => {
      const more = extra[op.operationId];
      return [accessKey(op.method, op.path), more ? { ...more, scope: op.scope } : apiKeyWith(op.scope)];
    }),
  );
}
