import type { Request } from 'express';
import { z } from 'zod';
import { DomainError } from '@sched/contracts';
import { parseParams, requireWorkspace } from '@sched/http';

const wsParams = z.object({ ws: z.string() }).loose();

/**
 * The workspace a workspace-scoped admin path acts for: the gateway forwards `{ws}` as
 * x-workspace-id after checking it exists. Both must agree, so a request that reached this service
 * some other way cannot act for a workspace it does not name (checked again here, decisions.md §3).
 */
export function scopedWorkspace(req: Request): string {
  const workspaceId = requireWorkspace(req);
  const { ws } = parseParams(wsParams, req);
  if (ws !== workspaceId) throw new DomainError('not_found');
  return workspaceId;
}
