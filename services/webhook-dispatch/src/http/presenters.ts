import { toTimestamp, type WebhookDelivery, type WebhookEndpoint } from '@sched/contracts';
import type { DeliveryView } from '../domain/webhook-deliveries';
import type { Endpoint } from '../domain/webhook-endpoints';

const ts = (d: Date | null) => (d ? toTimestamp(d) : null);

/** AdminWebhookEndpoint: never the secret (only create and rotate-secret add it, once). */
export function endpointOut(e: Endpoint): WebhookEndpoint {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    created_at: toTimestamp(e.createdAt),
    updated_at: toTimestamp(e.updatedAt),
  };
}

export function deliveryOut(d: DeliveryView): WebhookDelivery {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType as WebhookDelivery['event_type'],
    status: d.status,
    attempt_count: d.attemptCount,
    next_attempt_at: ts(d.nextAttemptAt),
    last_error: d.lastError,
    created_at: toTimestamp(d.createdAt),
    updated_at: toTimestamp(d.updatedAt),
    succeeded_at: ts(d.succeededAt),
    failed_at: ts(d.failedAt),
    attempts: d.attempts.map((a) => ({
      number: a.number,
      attempted_at: toTimestamp(a.attemptedAt),
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      error_kind: a.errorKind,
      error: a.error,
    })),
  };
}
