import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db, DbTx } from '@sched/db';
import type { PublicEventKind } from '@sched/contracts';
import type { Endpoint, EndpointStore } from '../domain/webhook-endpoints';
import { failPendingOfEndpoint } from './delivery.queries';
import { endpoints } from './schema';

type Conn = Db | DbTx;

const columns = {
  id: endpoints.id,
  workspaceId: endpoints.workspaceId,
  url: endpoints.url,
  events: endpoints.events,
  enabled: endpoints.enabled,
  disabledReason: endpoints.disabledReason,
  createdAt: endpoints.createdAt,
  updatedAt: endpoints.updatedAt,
};

type Row = Omit<Endpoint, 'events' | 'disabledReason'> & { events: string[]; disabledReason: string | null };

function toEndpoint(r: Row): Endpoint {
  return { ...r, events: r.events as PublicEventKind[], disabledReason: r.disabledReason as Endpoint['disabledReason'] };
}

const scoped = (workspaceId: string, id: string) => and(eq(endpoints.workspaceId, workspaceId), eq(endpoints.id, id));

export async function insertEndpoint(db: Conn, p: { id: string; workspaceId: string; url: string; events: PublicEventKind[]; secretSealed: string }): Promise<Endpoint> {
  const [row] = await db.insert(endpoints).values(p).returning(columns);
  return toEndpoint(row!);
}

export async function listEndpoints(db: Conn, workspaceId: string): Promise<Endpoint[]> {
  const rows = await db.select(columns).from(endpoints).where(eq(endpoints.workspaceId, workspaceId)).orderBy(asc(endpoints.createdAt), asc(endpoints.id));
  return rows.map(toEndpoint);
}

export async function findEndpoint(db: Conn, workspaceId: string, id: string): Promise<Endpoint | null> {
  const [row] = await db.select(columns).from(endpoints).where(scoped(workspaceId, id));
  return row ? toEndpoint(row) : null;
}

export function updateEndpoint(
  db: Db,
  workspaceId: string,
  id: string,
  changes: { url?: string; events?: PublicEventKind[]; enabled?: boolean },
): Promise<Endpoint | null> {
  return db.transaction(async (tx) => {
    const enabled = changes.enabled === undefined ? {} : { enabled: changes.enabled, disabledReason: changes.enabled ? null : 'admin' };
    const set = {
      updatedAt: sql`now()`,
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.events === undefined ? {} : { events: changes.events }),
      ...enabled,
    };
    const [row] = await tx.update(endpoints).set(set).where(scoped(workspaceId, id)).returning(columns);
    if (!row) return null;
    if (changes.enabled === false) await failPendingOfEndpoint(tx, workspaceId, id, 'endpoint_disabled');
    return toEndpoint(row);
  });
}

/** Deliveries and attempts go with it (ON DELETE CASCADE): the customer removed the receiver. */
export async function deleteEndpoint(db: Conn, workspaceId: string, id: string): Promise<boolean> {
  const rows = await db.delete(endpoints).where(scoped(workspaceId, id)).returning({ id: endpoints.id });
  return rows.length > 0;
}

export async function rotateEndpointSecret(db: Conn, workspaceId: string, id: string, secretSealed: string, previousExpiresAt: Date): Promise<Endpoint | null> {
  // Right-hand sides see the row before the update, so the old secret moves to previous.
  const [row] = await db
    .update(endpoints)
    .set({
      previousSecretSealed: sql`${endpoints.secretSealed}`,
      secretSealed,
      previousSecretExpiresAt: previousExpiresAt,
      updatedAt: sql`now()`,
    })
    .where(scoped(workspaceId, id))
    .returning(columns);
  return row ? toEndpoint(row) : null;
}

/** The receiver answered 410 Gone: stop sending to it at all. */
export async function disableGoneEndpoint(tx: DbTx, workspaceId: string, id: string): Promise<void> {
  await tx
    .update(endpoints)
    .set({ enabled: false, disabledReason: 'gone', updatedAt: sql`now()` })
    .where(and(scoped(workspaceId, id), eq(endpoints.enabled, true)));
  await failPendingOfEndpoint(tx, workspaceId, id, 'endpoint_disabled');
}

export function createEndpointStore(db: Db): EndpointStore {
  return {
    insert: (p) => insertEndpoint(db, p),
    list: (ws) => listEndpoints(db, ws),
    find: (ws, id) => findEndpoint(db, ws, id),
    update: (ws, id, changes) => updateEndpoint(db, ws, id, changes),
    delete: (ws, id) => deleteEndpoint(db, ws, id),
    rotateSecret: (ws, id, sealed, exp) => rotateEndpointSecret(db, ws, id, sealed, exp),
  };
}
