/**
 * This replica's send slots. At most `maxInFlight` attempts run at once, less the slots promised to
 * ingest statements whose claimed rows have not started yet (`reserve`). Per endpoint, this replica
 * never holds more than `perEndpoint` at once: attempts in flight here plus claims taken here and not
 * started yet, its exact share of the endpoint's cap (across replicas the cap is approximate).
 */
export class SendSlots {
  readonly maxInFlight: number;
  readonly perEndpoint: number;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly held = new Map<string, number>();
  private reserved = 0;

  constructor(limits: { maxInFlight: number; perEndpoint: number }) {
    this.maxInFlight = limits.maxInFlight;
    this.perEndpoint = limits.perEndpoint;
  }

  /** Slots neither running an attempt nor promised to an ingest statement. */
  free(): number {
    return this.maxInFlight - this.inFlight.size - this.reserved;
  }

  /** Every slot runs an attempt (promises to ingest statements aside). */
  full(): boolean {
    return this.maxInFlight - this.inFlight.size <= 0;
  }

  get running(): number {
    return this.inFlight.size;
  }

  /** Promises `n` slots to an ingest statement (given back with `unreserve`, or used by `run`). */
  reserve(n: number): void {
    this.reserved += n;
  }

  unreserve(n: number): void {
    this.reserved -= n;
  }

  /** Takes one of the endpoint's slots; false when this replica already holds its cap. */
  hold(endpointId: string): boolean {
    const n = this.held.get(endpointId) ?? 0;
    if (n >= this.perEndpoint) return false;
    this.held.set(endpointId, n + 1);
    return true;
  }

  unhold(endpointId: string): void {
    const n = (this.held.get(endpointId) ?? 0) - 1;
    if (n > 0) this.held.set(endpointId, n);
    else this.held.delete(endpointId);
  }

  /**
   * Runs an attempt in a slot the endpoint holds. `attempt` settles with whether the endpoint has due
   * deliveries waiting (it handles its own errors); once it has, the slots are free again and `ended`
   * hears that answer.
   */
  run(endpointId: string, attempt: Promise<boolean>, ended: (endpointHasMore: boolean) => void): void {
    let more = false;
    const work: Promise<void> = attempt
      .then((endpointHasMore) => {
        more = endpointHasMore;
      })
      .finally(() => {
        this.inFlight.delete(work);
        this.unhold(endpointId);
        ended(more);
      });
    this.inFlight.add(work);
  }

  /** Waits until no attempt runs (each is bounded by the send timeout). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
