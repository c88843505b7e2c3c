import { createGroupCommit, type GroupCommit } from '@sched/group-commit';
import type { ClaimedDelivery } from './delivery-worker.queries';
import { insertEventsDeliveries, type IngestClaim, type Ingested, type IngestEvent, type Queryable } from './ingest.queries';

/**
 * The worker's claim at insert, as the ingest needs it (delivery/ingest-tickets.ts): a ticket reserves
 * send slots for one statement, takes the rows the statement claimed, and is settled once it committed
 * (its claims are sent) or failed (its reservation is given back).
 */
export interface IngestTicketPort extends IngestClaim {
  take(claimed: readonly ClaimedDelivery[]): void;
  settle(committed: boolean): void;
}

export interface IngestClaimsPort {
  open(maxRows: number): IngestTicketPort;
}

/**
 * Send slots reserved per event while its statement runs. Most workspaces have one or two endpoints;
 * rows beyond this are left to the worker's claim. Kept small so that the consumer's concurrent
 * messages (its prefetch) do not take all of the worker's room from each other.
 */
export const MAX_CLAIMED_PER_EVENT = 4;

/**
 * One ingest statement at a time: the events arriving meanwhile wait and go together in the next one.
 * With two in flight, five events published together took three statements instead of two (dispatch
 * bench, BENCH_BATCH=5: 1.7 commits per event instead of 1.2, and 0.2 ms more CPU in the service).
 */
const MAX_IN_FLIGHT = 1;
/** The consumer's prefetch (10) bounds a batch anyway. */
const MAX_BATCH = 64;

export interface EventIngest {
  /** Records one event (its inbox row, its deliveries and their claims); settles once committed. */
  ingest(event: IngestEvent): Promise<Ingested>;
  /** The group commit's counters (tests). */
  stats: GroupCommit<IngestEvent, Ingested>['stats'];
}

/**
 * The ingest statement, group-committed: events that arrive while earlier statements run share the
 * next one, one round trip and one commit for all (no timer: an event with nothing in flight goes at
 * once, alone). Each statement has its own claim ticket, with room for MAX_CLAIMED_PER_EVENT rows per
 * event; the rows it claimed are sent once it has committed. A statement commits all of its events or
 * none (the consumer acknowledges each message only after that, so a crash mid-batch leaves every
 * message of the batch unacknowledged and redelivered, and their inbox rows tell which were written).
 * The same event twice (a message and its redelivered copy) never shares a statement. A batch that
 * fails runs again event by event, so one event's failure fails only its own message.
 */
export function eventIngest(opts: { pool: Queryable; claims: IngestClaimsPort }): EventIngest {
  const batches = createGroupCommit<IngestEvent, Ingested>({
    maxInFlight: MAX_IN_FLIGHT,
    maxBatch: MAX_BATCH,
    keyOf: (e) => e.eventId,
    retryAlone: () => true,
    run: async (events) => {
      const ticket = opts.claims.open(MAX_CLAIMED_PER_EVENT * events.length);
      let ingested: Ingested[];
      try {
        ingested = await insertEventsDeliveries(opts.pool, events, ticket);
      } catch (err) {
        // Not written, or (a connection lost during the commit) written with leases that expire.
        ticket.settle(false);
        throw err;
      }
      ticket.take(ingested.flatMap((i) => i.deliveries.filter((r) => r.claimed).map((r) => r.delivery)));
      ticket.settle(true);
      return ingested;
    },
  });
  return { ingest: (event) => batches.submit(event), stats: () => batches.stats() };
}
