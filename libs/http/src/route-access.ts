import { DomainError } from '@sched/contracts';
import type { FastStep } from './fast-path';
import { PRINCIPAL_KINDS, type PrincipalKind } from './internal-credential';
import { requestContext } from './request-context';

/**
 * Who may call one route of a service (docs/security.md, "Who may call what"). Every route of a
 * service that checks internal credentials has one rule; a route without one fails the start-up.
 */
export interface RouteAccess {
  /** The services whose credentials are accepted (the credential's issuer). */
  callers: readonly string[];
  /** On whose behalf. */
  principals: readonly PrincipalKind[];
  /** For an `api_key` principal: the scope its key must hold (contract rule 8: checked again here). */
  scope?: string;
}

/** `"<METHOD> <pattern as registered>"` → its rule, e.g. `'POST /v1/bookings'`. */
export type AccessTable = Readonly<Record<string, RouteAccess>>;

/** The routes a service answers without a credential: probes and scraping, which the network restricts. */
export const OPEN_ROUTES: ReadonlySet<string> = new Set(['GET /healthz', 'GET /readyz', 'GET /metrics']);

export const accessKey = (method: string, pattern: string) => `${method} ${pattern}`;

export const forbidden = (message: string) => new DomainError('forbidden', { message });

/** The path parameter that names the workspace, where a route has one. */
const WORKSPACE_PARAM = 'ws';

/**
 * The route's rule, checked after routing and before the body is read (401, then 404/405, then 403,
 * then 413/415: decisions.md §2): the caller, the principal, the key's scope, and the path's workspace
 * against the credential's. Rules on the body (the booking page's own invitation) are the handler's.
 */
export function accessCheck(rule: RouteAccess): FastStep {
  return (req, _res, next) => {
    const claims = requestContext(req).caller;
    if (!claims) return next(new DomainError('unauthenticated', { message: 'A valid internal credential is required.' }));
    if (!rule.callers.includes(claims.caller)) return next(forbidden('This caller may not call this route.'));
    if (!rule.principals.includes(claims.principal)) return next(forbidden('This principal may not call this route.'));
    if (claims.principal === 'api_key') {
      if (!claims.workspaceId || !claims.apiKeyId) return next(forbidden('An API key principal needs its workspace and key.'));
      if (rule.scope && !claims.scopes?.includes(rule.scope)) {
        return next(new DomainError('insufficient_scope', { details: [{ field: 'scope', issue: rule.scope }] }));
      }
    }
    const pathWorkspace = req.params[WORKSPACE_PARAM];
    if (pathWorkspace !== undefined && pathWorkspace !== claims.workspaceId) return next(forbidden('The credential is for another workspace.'));
    next();
  };
}

/** An operator route (`/admin/v1/…`): only the gateway forwards them, after checking ADMIN_TOKEN. */
export const OPERATOR_ONLY: RouteAccess = { callers: ['gateway'], principals: ['admin'] };

/** A v1 route: the gateway forwards it for an API key, which must hold `scope`. */
export const apiKeyWith = (scope: string): RouteAccess => ({ callers: ['gateway'], principals: ['api_key'], scope });

/** A route another service calls, for the principals given (default: whoever that service acts for). */
export const calledBy = (callers: readonly string[], principals: readonly PrincipalKind[] = PRINCIPAL_KINDS): RouteAccess => ({ callers, principals });
