import type { Request } from 'express';
import { z } from 'zod';
import { cursorSchema, DEFAULT_LIST_LIMIT, DomainError, limitQuerySchema } from '@sched/contracts';
import { requireWorkspace } from '@sched/http';
import type { Logger } from '@sched/logger';
import type { CursorCodec } from '@sched/pagination';
import type { SlotSources } from '../domain/find-slots';
import type { SlotsCache } from '../domain/slots-cache';
import type { EventTypeStore } from '../domain/manage-event-types';
import type { HostStore } from '../domain/manage-hosts';

/** What the routes need; built once in app.ts. */
export interface RouteDeps {
  hosts: HostStore;
  eventTypes: EventTypeStore;
  slots: SlotSources;
  slotsCache: SlotsCache;
  cursors: CursorCodec;
  logger: Logger;
  now(): Date;
}

/**
 * The workspace of an admin path. The gateway checked the admin token and that `:ws` exists, and
 * forwards it as x-workspace-id; a path that disagrees is treated as a workspace that does not exist.
 */
export function adminWorkspace(req: Request): string {
  const forwarded = requireWorkspace(req);
  if (req.params.ws !== forwarded) throw new DomainError('not_found');
  return forwarded;
}

/** Admin lists page like the v1 lists (cursor/limit in the query, default 20, keyset order). */
export const adminListQuerySchema = z.strictObject({ cursor: cursorSchema.optional(), limit: limitQuerySchema.optional() });

/** Decodes a list cursor (400 naming `cursor` on any failure); none = the first page. */
export function pageOf<P>(cursors: CursorCodec, endpoint: string, workspaceId: string, q: { cursor?: string; limit?: number }): { after: P | null; limit: number } {
  return { after: q.cursor === undefined ? null : cursors.decode<P>(endpoint, { workspace_id: workspaceId }, q.cursor), limit: q.limit ?? DEFAULT_LIST_LIMIT };
}

export function nextCursor(cursors: CursorCodec, endpoint: string, workspaceId: string, next: unknown): string | null {
  return next === null ? null : cursors.encode(endpoint, { workspace_id: workspaceId }, next);
}
