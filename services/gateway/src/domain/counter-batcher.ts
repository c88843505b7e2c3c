import { createGroupCommit, type GroupCommit } from '@sched/group-commit';

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

/** One request to count: the lane is its key and window. */
interface CountRequest {
  keyId: string;
  windowStart: Date;
}

/**
 * Group commit for the rate-limit counters (decisions.md §12), on @sched/group-commit with one lane
 * per key and window. Per lane at most one upsert is in flight in this process; requests arriving meanwhile
 * join the next batch, which goes out as one upsert of +n as soon as the one in flight ends. A lone request
 * is sent at once (no timer).
 *
 * Counting stays exact and shared across replicas: an upsert of +n that returns `total` owns the
 * positions total-n+1 … total, handed to the batch's requests in arrival order, so each request gets
 * the count it would have got alone (the first of a batch may be allowed while later ones are over).
 *
 * A failed upsert resolves every request of its batch to a CounterFailure (the caller fails open,
 * one of them reports it); the next batch is sent as usual.
 */
export class CounterBatcher {
  private readonly batches: GroupCommit<CountRequest, number | CounterFailure>;

  constructor(add: AddRequests) {
    this.batches = createGroupCommit<CountRequest, number | CounterFailure>({
      maxInFlight: 1,
      maxBatch: Infinity,
      // The time has no ':', so the first ':' separates it from the key id: distinct pairs never share a lane.
      laneOf: (r) => `${r.windowStart.getTime()}:${r.keyId}`,
      run: async (batch) => {
        const n = batch.length;
        try {
          const total = await add(batch[0]!.keyId, batch[0]!.windowStart, n);
          return batch.map((_, i) => total - n + i + 1);
        } catch (error) {
          return batch.map((_, i) => ({ error, batchSize: n, reportsBatch: i === 0 }));
        }
      },
    });
  }

  /** This request's exact count in the window, or a CounterFailure when its batch's upsert failed. */
  count(keyId: string, windowStart: Date): Promise<number | CounterFailure> {
    return this.batches.submit({ keyId, windowStart });
  }

  /** Number of key/window pairs with an upsert in flight (for tests and metrics). */
  get inFlight(): number {
    return this.batches.stats().inFlight;
  }
}
