import type { Db } from '@sched/db';
import type { AdminStore } from '../domain/workspace-admin';
import * as keys from './api-key.queries';
import * as workspaces from './workspace.queries';

/** The admin use cases' storage port, on the gateway schema. */
export function createAdminStore(db: Db): AdminStore {
  return {
    insertWorkspace: (p) => workspaces.insertWorkspace(db, p),
    findWorkspace: (id) => workspaces.findWorkspace(db, id),
    findWorkspaceBySlug: (slug) => workspaces.findWorkspaceBySlug(db, slug),
    insertApiKey: (p) => keys.insertApiKey(db, p),
    listApiKeys: (ws) => keys.listApiKeys(db, ws),
    revokeApiKey: (ws, id, now) => keys.revokeApiKey(db, ws, id, now),
  };
}
