/**
 * Adds `n` requests to a key's window in the shared store and returns the window's new total
 * (one atomic upsert: `count = count + n RETURNING count`).
 */
export type AddRequests = (keyId: string, windowStart: Date, n: number) => Promise<number>;

/**
 * What each request of a batch whose upsert failed gets instead of a count: the caller fails open.
 * `reportsBatch` is true for exactly one request of the batch (its first), which logs the failure,
 * so a failure is logged once per batch and in the context of a request that saw it.
 */
export interface CounterFailure {
  error: unknown;
  batchSize: number;
  reportsBatch: boolean;
}

/** Settles one request's count() with its outcome. */
type Waiter = (outcome: number | CounterFailure) => void;

interface Lane {
  /** Arrived while an upsert of this key and window was in flight; sent together when it ends. */
  next: Waiter[];
}

/**
 * Group commit for the rate-limit counters (decisions.md §12). Per key and window at most one upsert
 * is in flight in this process; requests arriving meanwhile join the next batch, which goes out as
 * one upsert of +n as soon as the one in flight ends. A lone request is sent at once (no timer).
 *
 * Counting stays exact and shared across replicas: an upsert of +n that returns `total` owns the
 * positions total-n+1 … total, handed to the batch's requests in arrival order, so each request gets
 * the count it would have got alone (the first of a batch may be allowed while later ones are over).
 *
 * A failed upsert resolves every request of its batch to a CounterFailure (the caller fails open,
 * one of them reports it); the next batch is sent as usual.
 */
export class CounterBatcher {
  /** Keys (window start + key id) with an upsert in flight. */
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly add: AddRequests) {}

  /** This request's exact count in the window, or a CounterFailure when its batch's upsert failed. */
  count(keyId: string, windowStart: Date): Promise<number | CounterFailure> {
    // The time has no ':', so the first ':' separates it from the key id: distinct pairs never share a lane.
    const laneKey = `${windowStart.getTime()}:${keyId}`;
    return new Promise((resolve) => {
      const lane = this.lanes.get(laneKey);
      if (lane) {
        lane.next.push(resolve);
        return;
      }
      const fresh: Lane = { next: [] };
      this.lanes.set(laneKey, fresh);
      this.send(laneKey, fresh, keyId, windowStart, [resolve]);
    });
  }

  /** Number of key/window pairs with an upsert in flight (for tests and metrics). */
  get inFlight(): number {
    return this.lanes.size;
  }

  private send(laneKey: string, lane: Lane, keyId: string, windowStart: Date, batch: Waiter[]): void {
    const n = batch.length;
    let pending: Promise<number>;
    try {
      pending = this.add(keyId, windowStart, n);
    } catch (err) {
      pending = Promise.reject(err);
    }
    void pending.then(
      (total) => {
        this.sendNext(laneKey, lane, keyId, windowStart);
        const first = total - n;
        for (let i = 0; i < n; i++) batch[i]!(first + i + 1);
      },
      (err: unknown) => {
        this.sendNext(laneKey, lane, keyId, windowStart);
        for (let i = 0; i < n; i++) batch[i]!({ error: err, batchSize: n, reportsBatch: i === 0 });
      },
    );
  }

  /** Sends what queued up behind the finished upsert, or frees the lane when nothing did. */
  private sendNext(laneKey: string, lane: Lane, keyId: string, windowStart: Date): void {
    if (lane.next.length === 0) {
      this.lanes.delete(laneKey);
      return;
    }
    const batch = lane.next;
    lane.next = [];
    this.send(laneKey, lane, keyId, windowStart, batch);
  }
}
