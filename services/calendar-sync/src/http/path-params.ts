import type { Request } from 'express';
import { DomainError, isId, type IdPrefix } from '@sched/contracts';
import { requestContext } from '@sched/http';

/**
 * Path identifiers. An id that cannot exist is a 404 like an unknown one (decisions.md §2: never tell
 * ids apart). Behind the gateway the workspace also arrives as x-workspace-id; a path naming another
 * workspace than the one the gateway checked is refused the same way.
 */
export function pathId(req: Request, name: string, prefix: IdPrefix): string {
  const value = req.params[name];
  if (typeof value !== 'string' || !isId(prefix, value)) throw new DomainError('not_found');
  return value;
}

export function pathWorkspace(req: Request): string {
  const ws = pathId(req, 'ws', 'wsp');
  const forwarded = requestContext(req).workspaceId;
  if (forwarded !== undefined && forwarded !== ws) throw new DomainError('not_found');
  return ws;
}
