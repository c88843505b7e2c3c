import { EVENT_MESSAGE_SCHEMAS, toWebhookBody, type EventMessage, type PublicEventKind } from '@sched/contracts';
import type { EventEnvelope } from '@sched/messaging';
import type { Ingested, IngestEvent } from '../store/ingest.queries';

/**
 * A public event becomes one delivery per enabled endpoint of its workspace that wants its kind,
 * written with the event's inbox row in one statement (autocommit: the consumer's `idempotent`
 * path, no transaction; events arriving together share it, store/ingest-batch.queries.ts), so the
 * message is acknowledged as soon as they are safely stored and a redelivered event writes nothing.
 * The body is fixed here, once: every attempt signs and sends the same bytes. Endpoints created after
 * the event was consumed do not get it.
 * The same statement leases the new deliveries to this replica (within its free room and the
 * per-endpoint cap): committed when it returns, they are sent at once. Those it could not take are
 * announced by a NOTIFY and claimed by a worker as usual.
 */
export async function handlePublicEvent(ingest: (e: IngestEvent) => Promise<Ingested>, envelope: EventEnvelope, kind: PublicEventKind): Promise<Ingested> {
  // A message that breaks the contract fails here (and ends in the DLQ after its retries) rather
  // than reaching a customer, so data.internal and unknown fields can never leak.
  const message = EVENT_MESSAGE_SCHEMAS[kind].parse(envelope) as EventMessage<PublicEventKind>;
  const body = JSON.stringify(toWebhookBody(message));
  return ingest({ workspaceId: message.workspace_id, eventId: message.id, eventType: kind, body });
}
