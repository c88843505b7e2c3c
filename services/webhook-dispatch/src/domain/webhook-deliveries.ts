import { DEFAULT_LIST_LIMIT, DomainError, type WebhookAttemptErrorKind, type WebhookDeliveryStatus } from '@sched/contracts';
import type { CursorCodec } from '@sched/pagination';
import { toPage } from '@sched/pagination';
import type { EndpointStore } from './webhook-endpoints';

export interface AttemptView {
  number: number;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  errorKind: WebhookAttemptErrorKind | null;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  succeededAt: Date | null;
  failedAt: Date | null;
  attempts: AttemptView[];
}

export interface DeliveryFilter {
  status?: WebhookDeliveryStatus;
  endpointId?: string;
}

/** Position in the list: newest first, by created_at then id. */
export interface DeliveryPosition {
  createdAt: Date;
  id: string;
}

export interface DeliveryStore {
  /** Newest first, after `after` when given; `limit` rows at most. */
  list(workspaceId: string, filter: DeliveryFilter, after: DeliveryPosition | null, limit: number): Promise<DeliveryView[]>;
  /**
   * The operator path POST /admin/v1/webhook-deliveries/{id}/replay names no workspace: the one lookup
   * by id alone, which only tells where the delivery belongs; everything after is workspace-scoped.
   */
  locate(id: string): Promise<{ workspaceId: string; endpointId: string } | null>;
  /** Back to pending with a fresh retry budget and the same webhook-id; false when its status is not in `from`. */
  requeue(workspaceId: string, id: string, from: readonly WebhookDeliveryStatus[]): Promise<boolean>;
  requeueFailedInRange(workspaceId: string, endpointId: string, from: Date, to: Date): Promise<number>;
}

export interface DeliveryDeps {
  deliveries: DeliveryStore;
  endpoints: Pick<EndpointStore, 'find'>;
  cursors: CursorCodec;
}

const LIST = 'admin.webhook-deliveries';

export async function listDeliveries(
  deps: DeliveryDeps,
  workspaceId: string,
  query: { status?: WebhookDeliveryStatus; endpoint_id?: string; cursor?: string; limit?: number },
): Promise<{ items: DeliveryView[]; nextCursor: string | null }> {
  const filters = { workspace_id: workspaceId, status: query.status ?? null, endpoint_id: query.endpoint_id ?? null };
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  let after: DeliveryPosition | null = null;
  if (query.cursor !== undefined) {
    const [createdAt, id] = deps.cursors.decode<[string, string]>(LIST, filters, query.cursor);
    const at = new Date(createdAt);
    if (typeof id !== 'string' || Number.isNaN(at.getTime())) throw new DomainError('invalid_request', { details: [{ field: 'cursor', issue: 'invalid_format' }] });
    after = { createdAt: at, id };
  }
  const rows = await deps.deliveries.list(workspaceId, { status: query.status, endpointId: query.endpoint_id }, after, limit + 1);
  const page = toPage(rows, limit, (r) => [r.createdAt.toISOString(), r.id]);
  return { items: page.items, nextCursor: page.next ? deps.cursors.encode(LIST, filters, page.next) : null };
}

function endpointUnusable(issue: 'not_found' | 'endpoint_disabled'): DomainError {
  return new DomainError('invalid_reference', { details: [{ field: 'endpoint_id', issue }] });
}

/**
 * Re-sends one delivery with the same webhook-id: a failed one, or a succeeded one the receiver
 * lost. A pending one is already queued, so nothing changes (requeued 0): it is never sent twice.
 */
export async function replayDelivery(deps: DeliveryDeps, id: string): Promise<{ requeued: number }> {
  const located = await deps.deliveries.locate(id);
  if (!located) throw new DomainError('not_found');
  const endpoint = await deps.endpoints.find(located.workspaceId, located.endpointId);
  if (!endpoint) throw new DomainError('not_found');
  if (!endpoint.enabled) throw endpointUnusable('endpoint_disabled');
  const requeued = await deps.deliveries.requeue(located.workspaceId, id, ['failed', 'succeeded']);
  return { requeued: requeued ? 1 : 0 };
}

/** Re-queues every failed delivery to one endpoint created in [from, to). */
export async function replayFailedInRange(
  deps: DeliveryDeps,
  workspaceId: string,
  input: { endpoint_id: string; from: Date; to: Date },
): Promise<{ requeued: number }> {
  const endpoint = await deps.endpoints.find(workspaceId, input.endpoint_id);
  if (!endpoint) throw endpointUnusable('not_found');
  if (!endpoint.enabled) throw endpointUnusable('endpoint_disabled');
  return { requeued: await deps.deliveries.requeueFailedInRange(workspaceId, input.endpoint_id, input.from, input.to) };
}
