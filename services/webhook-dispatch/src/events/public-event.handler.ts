import { EVENT_MESSAGE_SCHEMAS, newId, toWebhookBody, type EventMessage, type PublicEventKind } from '@sched/contracts';
import type { DbTx } from '@sched/db';
import type { EventEnvelope } from '@sched/messaging';
import { insertDeliveries, notifyDeliveriesDue } from '../store/delivery.queries';
import { endpointsWanting } from '../store/endpoint.queries';

/**
 * A public event becomes one delivery per enabled endpoint of its workspace that wants its kind,
 * written in the consumer's inbox transaction so the message is acknowledged as soon as they are
 * safely stored; the worker sends them (woken by the NOTIFY on commit). The body is fixed here, once:
 * every attempt signs and sends the same bytes. Endpoints created after the event was consumed do
 * not get it.
 */
export async function handlePublicEvent(tx: DbTx, envelope: EventEnvelope, kind: PublicEventKind): Promise<number> {
  // A message that breaks the contract fails here (and ends in the DLQ after its retries) rather
  // than reaching a customer, so data.internal and unknown fields can never leak.
  const message = EVENT_MESSAGE_SCHEMAS[kind].parse(envelope) as EventMessage<PublicEventKind>;
  const endpointIds = await endpointsWanting(tx, message.workspace_id, kind);
  if (endpointIds.length === 0) return 0;
  const body = JSON.stringify(toWebhookBody(message));
  const created = await insertDeliveries(
    tx,
    endpointIds.map((endpointId) => ({ id: newId('whd'), workspaceId: message.workspace_id, endpointId, eventId: message.id, eventType: kind, body })),
  );
  if (created > 0) await notifyDeliveriesDue(tx);
  return created;
}
