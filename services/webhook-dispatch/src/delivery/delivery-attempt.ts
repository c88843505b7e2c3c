import { runWithContext, type Logger } from '@sched/logger';
import type { SecretBox } from '@sched/secrets';
import { decideAfterAttempt, describeAttempt, type RetryPolicy } from '../domain/delivery-policy';
import { activeSecrets, webhookHeaders } from '../domain/webhook-signing';
import type { AttemptRecords } from '../store/attempt-records.queries';
import type { ClaimedDelivery } from '../store/delivery-worker.queries';
import type { DispatchMetrics } from './dispatch.metrics';
import { errorText } from './error-text';
import type { WebhookSender } from './webhook.sender';

export interface DeliveryAttemptOptions {
  records: AttemptRecords;
  sender: WebhookSender;
  secrets: SecretBox;
  metrics: DispatchMetrics;
  logger: Logger;
  policy: RetryPolicy;
  random: () => number;
  /** A retry is due at this time (epoch ms). */
  onRetry: (at: number) => void;
  /** The delivery failed after its last attempt: its dead letter awaits publishing. */
  onFailed: () => void;
}

/** Sends a claimed delivery once. Settles with whether its endpoint has due deliveries waiting for a slot. */
export type DeliveryAttempt = (d: ClaimedDelivery, token: string) => Promise<boolean>;

/**
 * One attempt and its record: sign, send, decide what follows (success, retry after a backoff, failed
 * for good, endpoint gone), record it under the claim token, count and log it. An attempt that cannot
 * be completed is not recorded: the lease expires and the delivery is tried again then.
 */
export function deliveryAttempt(o: DeliveryAttemptOptions): DeliveryAttempt {
  const log = o.logger;

  async function attempt(d: ClaimedDelivery, token: string): Promise<boolean> {
    const attemptedAt = new Date();
    const secrets = activeSecrets(
      {
        current: o.secrets.open(d.secretSealed, d.endpointId),
        previous: d.previousSecretSealed ? o.secrets.open(d.previousSecretSealed, d.endpointId) : null,
        previousExpiresAt: d.previousSecretExpiresAt,
      },
      attemptedAt,
    );
    const headers = webhookHeaders(secrets, d.eventId, d.body, attemptedAt);
    const { result, latencyMs } = await o.sender.send(d.url, headers, d.body);
    const described = describeAttempt(result);
    const roundAttempts = d.roundAttempts + 1;
    const decision = decideAfterAttempt(result, roundAttempts, o.policy, new Date(), o.random);
    const { moved, more } = await o.records.record(d, token, { attemptedAt, latencyMs, ...described }, decision);
    o.metrics.attempt(described.errorKind ?? 'success', latencyMs);

    const fields = {
      delivery_id: d.id,
      endpoint_id: d.endpointId,
      event_type: d.eventType,
      attempt: d.attemptCount + 1,
      status_code: described.statusCode,
      latency_ms: latencyMs,
      error_kind: described.errorKind,
    };
    if (!moved) {
      log.info('webhook attempt recorded; the delivery had changed meanwhile', fields);
      return more;
    }
    switch (decision.kind) {
      case 'succeeded':
        o.metrics.finished('succeeded', Date.now() - d.createdAt.getTime());
        log.info('webhook delivered', fields);
        break;
      case 'retry':
        o.onRetry(Date.now() + decision.delayMs);
        log.info('webhook attempt failed; will retry', { ...fields, error: described.error, retry_in_ms: decision.delayMs });
        break;
      case 'failed':
        o.onFailed();
        o.metrics.finished('failed', null);
        log.warn('webhook delivery failed after its last attempt; dead-lettering', { ...fields, error: described.error });
        break;
      case 'gone':
        o.metrics.finished('gone', null);
        log.warn('receiver answered 410 Gone; endpoint disabled and its pending deliveries stopped', fields);
        break;
    }
    return more;
  }

  return (d, token) =>
    runWithContext({ event_id: d.eventId, workspace_id: d.workspaceId }, () => attempt(d, token)).catch((err: unknown) => {
      // Not recorded: the lease expires and the delivery is tried again then.
      log.error('webhook attempt could not be completed', { delivery_id: d.id, error: errorText(err) });
      return false;
    });
}
