import type { ClaimedDelivery } from '../store/delivery-worker.queries';
import type { ClaimTokens } from './claim-tokens';
import type { SendSlots } from './send-slots';

/**
 * Claims taken while an event is consumed: the ingest statement leases the new deliveries to this
 * replica, up to its free room, and they are sent as soon as it has committed, with no NOTIFY and no
 * claim query in between.
 */
export interface IngestClaims {
  /** Reserves up to `maxRows` send slots for one ingest statement (none while stopping). */
  open(maxRows: number): IngestTicket;
}

export interface IngestTicket {
  /** The claim token to write on the rows claimed; '' when room is 0. */
  readonly token: string;
  /** Rows the statement may claim. */
  readonly room: number;
  readonly perEndpoint: number;
  readonly leaseMs: number;
  /**
   * The rows the statement claimed. Those over this replica's own per-endpoint count (a statement
   * does not see the claims of others running at the same time) are given back once committed
   * instead of being sent; unused room is freed at once.
   */
  take(claimed: readonly ClaimedDelivery[]): void;
  /** The statement (or its transaction) ended: committed, send what was kept; otherwise forget it (nothing was written, or the lease settles it). */
  settle(committed: boolean): void;
}

export interface IngestTicketsOptions {
  slots: SendSlots;
  claims: ClaimTokens;
  leaseMs: number;
  /** Sends a claimed delivery whose endpoint slot is held. */
  send: (d: ClaimedDelivery, token: string) => void;
  /** A statement used less room than it reserved: the slots it gives back are free now. */
  roomReturned: () => void;
}

/**
 * The worker's side of claim at insert: a ticket per ingest statement reserves send slots, keeps the
 * rows it may send (within this replica's per-endpoint count) and starts them once the statement has
 * committed. While stopping, no ticket gets room, and the claims of statements still running are
 * waited for (boundedly) before the worker stops sending.
 */
export class IngestTickets implements IngestClaims {
  /** Tickets whose statement has not ended; stop waits for them. */
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;
  /** Past waiting for ingest claims: nothing may start any more. */
  private finished = false;

  constructor(private readonly o: IngestTicketsOptions) {}

  open(maxRows: number): IngestTicket {
    const { slots, claims, send } = this.o;
    const room = this.stopped ? 0 : Math.max(0, Math.min(maxRows, slots.free()));
    slots.reserve(room);
    const token = room > 0 ? claims.next() : '';
    let kept: ClaimedDelivery[] = [];
    let over: string[] = [];
    let taken = false;
    let settled = false;
    let ended = (): void => undefined;
    // Only a ticket with room can start sends after stop() began (none is opened with room then).
    const done = room > 0 ? new Promise<void>((resolve) => (ended = resolve)) : undefined;
    if (done) this.pending.add(done);
    return {
      token,
      room,
      perEndpoint: slots.perEndpoint,
      leaseMs: this.o.leaseMs,
      take: (claimed) => {
        if (taken || settled) throw new Error('ingest ticket already used');
        taken = true;
        for (const d of claimed) {
          if (kept.length < room && slots.hold(d.endpointId)) kept.push(d);
          else over.push(d.id);
        }
        slots.unreserve(room - kept.length);
        // The slots not needed are free now; a round may be waiting for them.
        if (room > kept.length) this.o.roomReturned();
      },
      settle: (committed) => {
        if (settled) return;
        settled = true;
        // Before take() (the statement failed) the whole reservation is still out; after it, the kept part.
        slots.unreserve(taken ? kept.length : room);
        if (committed && !this.finished) {
          for (const d of kept) send(d, token);
          claims.giveBack(token, over);
        } else {
          for (const d of kept) slots.unhold(d.endpointId);
        }
        kept = [];
        over = [];
        if (done) this.pending.delete(done);
        ended();
      },
    };
  }

  /** No room for new tickets from now on. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * Waits up to `waitMs` for the statements holding claims to end (they take milliseconds; this bounds
   * a stuck one), then starts nothing more: claims of a statement that commits later are not sent
   * here, their lease expires and another replica sends them.
   */
  async drain(waitMs: number): Promise<void> {
    const giveUp = Date.now() + waitMs;
    while (this.pending.size > 0 && Date.now() < giveUp) {
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.pending]),
        new Promise((r) => (timeout = setTimeout(r, Math.max(0, giveUp - Date.now())))),
      ]);
      clearTimeout(timeout);
    }
    this.finished = true;
  }
}
