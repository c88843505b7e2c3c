import { EVENT_MESSAGE_SCHEMAS, toWebhookBody, type EventMessage, type PublicEventKind } from '@sched/contracts';
import type { EventEnvelope } from '@sched/messaging';
import type { IngestClaims } from '../delivery/delivery.worker';
import { insertEventDeliveries, type Ingested, type Queryable } from '../store/ingest.queries';

/**
 * Send slots reserved per event while its statement runs. Most workspaces have one or two endpoints;
 * rows beyond this are left to the worker's claim. Kept small so that the consumer's concurrent
 * messages (its prefetch) do not take all of the worker's room from each other.
 */
const MAX_CLAIMED_PER_EVENT = 4;

/**
 * A public event becomes one delivery per enabled endpoint of its workspace that wants its kind,
 * written with the event's inbox row in one statement (autocommit: the consumer's `idempotent`
 * path, no transaction), so the message is acknowledged as soon as they are safely stored and a
 * redelivered event writes nothing. The body is fixed here, once: every attempt signs and sends the
 * same bytes. Endpoints created after the event was consumed do not get it.
 * The same statement leases the new deliveries to this replica (within its free room and the
 * per-endpoint cap): committed when it returns, they are sent at once. Those it could not take are
 * announced by a NOTIFY and claimed by a worker as usual.
 */
export async function handlePublicEvent(pool: Queryable, envelope: EventEnvelope, kind: PublicEventKind, claims: IngestClaims): Promise<Ingested> {
  // A message that breaks the contract fails here (and ends in the DLQ after its retries) rather
  // than reaching a customer, so data.internal and unknown fields can never leak.
  const message = EVENT_MESSAGE_SCHEMAS[kind].parse(envelope) as EventMessage<PublicEventKind>;
  const body = JSON.stringify(toWebhookBody(message));
  const ticket = claims.open(MAX_CLAIMED_PER_EVENT);
  let ingested: Ingested;
  try {
    ingested = await insertEventDeliveries(pool, { workspaceId: message.workspace_id, eventId: message.id, eventType: kind, body }, ticket);
  } catch (err) {
    // Not written, or (a connection lost during the commit) written with leases that expire.
    ticket.settle(false);
    throw err;
  }
  ticket.take(ingested.deliveries.filter((r) => r.claimed).map((r) => r.delivery));
  ticket.settle(true);
  return ingested;
}
